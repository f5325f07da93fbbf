package modelsim

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/story-automator/story-automator/internal/coded"
)

// maxBody is the largest request body model-sim reads.
const maxBody = 64 << 20

// ErrNotLoopback refuses a listen address off the loopback interface: the
// endpoint hands out shell commands and must never be reachable from elsewhere.
var ErrNotLoopback = errors.New("model-sim listens on loopback only (127.0.0.1, ::1 or localhost)")

// Options configure a server.
type Options struct {
	// Listen is host:port on loopback; default 127.0.0.1:0 (any free port).
	Listen string
	// Script plans turns before the built-in brain; nil = built-in only.
	Script *Script
	// Exe is the story-automator binary agents run for a step.
	Exe string
	// RecordFile, when set, receives one JSON line per exchange (request
	// body included), for capturing what a real CLI sends.
	RecordFile string
}

// Exchange is one request the server received and what it answered.
type Exchange struct {
	Seq      int    `json:"seq"`
	Protocol string `json:"protocol"`
	Method   string `json:"method"`
	Path     string `json:"path"`
	Model    string `json:"model,omitempty"`
	Side     bool   `json:"side,omitempty"`
	Status   int    `json:"status"`
	Text     string `json:"text,omitempty"`
	Call     *Call  `json:"call,omitempty"`
	Hang     bool   `json:"hang,omitempty"`
	// Limit is the kind of the script's limit that refused the request.
	Limit   string          `json:"limit,omitempty"`
	Usage   Usage           `json:"usage"`
	Request json.RawMessage `json:"request,omitempty"`
	// At is when the request was answered (its response about to be sent).
	At time.Time `json:"at"`
}

// Server is a running model-sim endpoint.
type Server struct {
	brain    *Brain
	ln       net.Listener
	http     *http.Server
	url      string
	record   *os.File
	closing  chan struct{}
	closeErr error
	once     sync.Once

	mu        sync.Mutex
	exchanges []Exchange
	changed   chan struct{}
	ids       atomic.Int64
	limits    limitClock
}

// Start listens on a loopback address and serves until Close. An address
// off the loopback is a usage error, any other failure model_sim_listen
// (internal/coded).
func Start(o Options) (*Server, error) {
	s, err := listen(o)
	switch {
	case errors.Is(err, ErrNotLoopback):
		return nil, coded.WrapUsage(err)
	case err != nil:
		return nil, coded.Wrap("model_sim_listen", err)
	}
	return s, nil
}

func listen(o Options) (*Server, error) {
	addr := o.Listen
	if addr == "" {
		addr = "127.0.0.1:0"
	}
	if err := checkLoopback(addr); err != nil {
		return nil, err
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("listen %s: %w", addr, err)
	}
	s := &Server{brain: &Brain{Script: o.Script, Exe: o.Exe}, ln: ln, closing: make(chan struct{}),
		changed: make(chan struct{}), url: "http://" + ln.Addr().String()}
	if o.RecordFile != "" {
		if s.record, err = os.OpenFile(o.RecordFile, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600); err != nil {
			ln.Close()
			return nil, fmt.Errorf("open record file: %w", err)
		}
	}
	// A request's head must arrive within 10 s; net/http bounds its size.
	// Its log stays quiet: a dropped stream is a fault model-sim plays on purpose.
	s.http = &http.Server{Handler: http.HandlerFunc(s.route), ReadHeaderTimeout: 10 * time.Second,
		ErrorLog: log.New(io.Discard, "", 0)}
	go func() { _ = s.http.Serve(ln) }()
	return s, nil
}

// checkLoopback accepts only a loopback host (an IP or "localhost").
func checkLoopback(addr string) error {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return fmt.Errorf("listen address %q: %w", addr, err)
	}
	if host == "localhost" {
		return nil
	}
	if ip := net.ParseIP(host); ip != nil && ip.IsLoopback() {
		return nil
	}
	return fmt.Errorf("%w: got %q", ErrNotLoopback, addr)
}

// URL is the base URL, "http://127.0.0.1:PORT" (Anthropic and Gemini clients
// take it as is; OpenAI clients take URL()+"/v1").
func (s *Server) URL() string { return s.url }

// Close stops serving; requests left hanging end.
func (s *Server) Close() error {
	s.once.Do(func() {
		s.closeErr = s.http.Close()
		close(s.closing)
		if s.record != nil {
			s.record.Close()
		}
	})
	return s.closeErr
}

// Done is closed when the server closes.
func (s *Server) Done() <-chan struct{} { return s.closing }

// Exchanges returns every exchange so far, in arrival order.
func (s *Server) Exchanges() []Exchange {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Exchange(nil), s.exchanges...)
}

// Changed is closed at the next exchange; wait on it, then call Exchanges.
func (s *Server) Changed() <-chan struct{} {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.changed
}

// TotalUsage sums the usage every response reported.
func (s *Server) TotalUsage() Usage {
	var t Usage
	for _, e := range s.Exchanges() {
		t.InputTokens += e.Usage.InputTokens
		t.OutputTokens += e.Usage.OutputTokens
		t.CacheReadTokens += e.Usage.CacheReadTokens
		t.CacheWriteTokens += e.Usage.CacheWriteTokens
	}
	return t
}

// add records an exchange, numbering it.
func (s *Server) add(e Exchange) {
	s.mu.Lock()
	e.Seq, e.At = len(s.exchanges)+1, time.Now()
	s.exchanges = append(s.exchanges, e)
	close(s.changed)
	s.changed = make(chan struct{})
	rec := s.record
	if rec != nil {
		data, _ := json.Marshal(e)
		_, _ = rec.Write(append(data, '\n'))
	}
	s.mu.Unlock()
}

// newID returns a fresh id with the protocol's prefix ("toolu_", "call_").
func (s *Server) newID(prefix string) string {
	return fmt.Sprintf("%smodelsim%06d", prefix, s.ids.Add(1))
}

func (s *Server) route(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxBody))
	if err != nil {
		if errors.As(err, new(*http.MaxBytesError)) {
			http.Error(w, "model-sim: request body over 64 MiB", http.StatusRequestEntityTooLarge)
		}
		return // otherwise the client went away while sending
	}
	p := r.URL.Path
	switch {
	case r.Method == "POST" && p == "/v1/messages":
		s.anthropicMessages(w, r, body)
	case r.Method == "POST" && p == "/v1/messages/count_tokens":
		s.anthropicCountTokens(w, r, body)
	case r.Method == "POST" && (p == "/v1/responses" || p == "/responses"):
		s.openaiResponses(w, r, body)
	case r.Method == "GET" && (p == "/v1/models" || p == "/models"):
		s.openaiModels(w, r)
	case strings.HasPrefix(p, "/v1beta/models/") || strings.HasPrefix(p, "/v1/models/") || strings.HasPrefix(p, "/v1alpha/models/"):
		s.gemini(w, r, body)
	default:
		s.add(Exchange{Method: r.Method, Path: r.RequestURI, Status: 404, Request: rawOrNil(body)})
		http.Error(w, "model-sim: no such endpoint", http.StatusNotFound)
	}
}

// answer records the exchange that answers a request with rep, usage being
// what the protocol reports, then does the reply's delay or hang; false
// means the client or the server went away first.
func (s *Server) answer(r *http.Request, body []byte, protocol, model string, conv *Conversation, rep Reply, usage Usage) bool {
	ex := Exchange{Protocol: protocol, Method: r.Method, Path: r.RequestURI, Model: model,
		Side: conv.Side, Status: 200, Text: rep.Text, Call: rep.Call, Hang: rep.Hang, Request: rawOrNil(body)}
	if rep.ErrorStatus != 0 {
		ex.Status = rep.ErrorStatus
	} else if !rep.Hang {
		ex.Usage = usage
	}
	s.add(ex)
	return s.wait(r, rep)
}

// wait does the reply's delay or hang; false means the client or the
// server went away first. A hang never answers: when it ends, the
// connection is dropped without a response.
func (s *Server) wait(r *http.Request, rep Reply) bool {
	if rep.Hang {
		select {
		case <-r.Context().Done():
		case <-s.closing:
		}
		panic(http.ErrAbortHandler)
	}
	if rep.Delay <= 0 {
		return true
	}
	t := time.NewTimer(rep.Delay)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-r.Context().Done():
	case <-s.closing:
	}
	return false
}

func rawOrNil(body []byte) json.RawMessage {
	if json.Valid(body) {
		return json.RawMessage(body)
	}
	return nil
}

// sse writes server-sent events and flushes each one.
type sse struct {
	w  http.ResponseWriter
	rc *http.ResponseController
}

func newSSE(w http.ResponseWriter) *sse {
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	w.WriteHeader(200)
	return &sse{w: w, rc: http.NewResponseController(w)}
}

// event writes one event; name "" writes a data-only event (Gemini's form).
func (e *sse) event(name string, data any) {
	b := marshal(data)
	if name != "" {
		fmt.Fprintf(e.w, "event: %s\n", name)
	}
	fmt.Fprintf(e.w, "data: %s\n\n", b)
	_ = e.rc.Flush() // a client that went away misses the rest; nothing to tell it
}

func writeJSONBody(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write(append(marshal(v), '\n'))
}

// URLs are the base URLs each CLI is given.
type URLs struct {
	Base      string
	Anthropic string // ANTHROPIC_BASE_URL
	OpenAI    string // a Codex model provider's base_url (".../v1")
	Gemini    string // GOOGLE_GEMINI_BASE_URL
}

// BaseURLs derives each CLI's base URL from the server's.
func BaseURLs(base string) URLs {
	return URLs{Base: base, Anthropic: base, OpenAI: base + "/v1", Gemini: base}
}

// Serving is the sentence a terminal shows once model-sim serves at u.
func (u URLs) Serving() string {
	return fmt.Sprintf("model-sim is serving on loopback. Claude Code: ANTHROPIC_BASE_URL=%s; Codex: base_url = %q; Gemini: GOOGLE_GEMINI_BASE_URL=%s. Ctrl-C stops it.",
		u.Anthropic, u.OpenAI, u.Gemini)
}

// marshal is json.Marshal without HTML escaping, so commands read as sent.
func marshal(v any) []byte {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(v)
	return bytes.TrimRight(b.Bytes(), "\n")
}

// Fields is model-sim's announcement as JSON fields: its URLs, its pid, and
// the environment of the offline home it wrote (--home), if any.
func (u URLs) Fields(pid int, env []string) map[string]any {
	return map[string]any{"url": u.Base, "anthropicBaseUrl": u.Anthropic, "openaiBaseUrl": u.OpenAI,
		"geminiBaseUrl": u.Gemini, "pid": pid, "env": env}
}

// WriteText announces the server to a person: its URL, how to point each
// CLI at it, and the offline home's environment as export lines.
func (u URLs) WriteText(w io.Writer, env []string) {
	fmt.Fprintln(w, u.Base)
	fmt.Fprintln(w, u.Serving())
	for _, kv := range env {
		fmt.Fprintf(w, "export %s\n", kv)
	}
}
