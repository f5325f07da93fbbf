package modelsim

import "net/http"

func (s *Server) gemini(w http.ResponseWriter, r *http.Request, body []byte) {
	http.Error(w, "not yet", http.StatusNotImplemented)
}
