package modelsim

import "net/http"

func (s *Server) openaiResponses(w http.ResponseWriter, r *http.Request, body []byte) {
	http.Error(w, "not yet", http.StatusNotImplemented)
}

func (s *Server) openaiModels(w http.ResponseWriter, r *http.Request) {
	http.Error(w, "not yet", http.StatusNotImplemented)
}

func (s *Server) gemini(w http.ResponseWriter, r *http.Request, body []byte) {
	http.Error(w, "not yet", http.StatusNotImplemented)
}
