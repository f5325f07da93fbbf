// Package loophttp is a small HTTP/1.1 server for model-sim's loopback endpoint.
//
// net/http would serve as well, but linking it brings crypto/tls, x509, HTTP/2
// and their package initialisation into every start of the binary — the Stop
// hook's too, which must start at the process floor. model-sim needs little:
// keep-alive, request bodies sent whole or chunked, responses buffered or
// streamed (server-sent events), a request's context ended when its client
// goes away, and dropping a connection without an answer.
package loophttp

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/textproto"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"
)

// MaxBody is the largest request body a server reads (64 MiB).
const MaxBody = 64 << 20

// ErrAbort, panicked by a handler, drops the connection without a response.
var ErrAbort = errors.New("loophttp: abort handler")

// Request is one request, its body read whole before the handler runs.
type Request struct {
	Method string
	// Target is the request-target as sent ("/v1/messages?beta=true").
	Target string
	// Path is Target's path, unescaped.
	Path   string
	Proto  string // "HTTP/1.1"
	Header textproto.MIMEHeader
	Body   []byte

	ctx context.Context
}

// Context ends when the client closes its connection, the handler
// returns, or the server closes.
func (r *Request) Context() context.Context { return r.ctx }

// Handler answers one request.
type Handler func(w *Response, r *Request)

// Server serves HTTP/1.1 on a listener until Close.
type Server struct {
	Handler Handler
	// HeaderTimeout bounds reading a request's head and body once its first
	// byte arrived; zero means 10 s. An idle connection may wait forever.
	HeaderTimeout time.Duration

	ctx    context.Context
	cancel context.CancelFunc
	once   sync.Once

	mu     sync.Mutex
	ln     net.Listener
	conns  map[net.Conn]struct{}
	closed bool
}

// ErrServerClosed is returned by Serve after Close.
var ErrServerClosed = errors.New("loophttp: server closed")

func (s *Server) init() {
	s.once.Do(func() {
		s.ctx, s.cancel = context.WithCancel(context.Background())
		s.conns = make(map[net.Conn]struct{})
	})
}

// Serve accepts connections on ln and serves each in its own goroutine. It
// returns ErrServerClosed after Close, or the listener's error.
func (s *Server) Serve(ln net.Listener) error {
	s.init()
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		ln.Close()
		return ErrServerClosed
	}
	s.ln = ln
	s.mu.Unlock()
	for {
		c, err := ln.Accept()
		if err != nil {
			if s.isClosed() {
				return ErrServerClosed
			}
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() {
				continue
			}
			return err
		}
		if !s.track(c) {
			c.Close()
			return ErrServerClosed
		}
		go s.serveConn(c)
	}
}

// Close stops accepting, closes every connection and ends every request's
// context; handlers still running see their context done.
func (s *Server) Close() error {
	s.init()
	s.mu.Lock()
	s.closed = true
	var err error
	if s.ln != nil {
		err = s.ln.Close()
	}
	for c := range s.conns {
		c.Close()
	}
	s.mu.Unlock()
	s.cancel()
	if errors.Is(err, net.ErrClosed) {
		err = nil
	}
	return err
}

func (s *Server) isClosed() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.closed
}

func (s *Server) track(c net.Conn) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return false
	}
	s.conns[c] = struct{}{}
	return true
}

func (s *Server) untrack(c net.Conn) {
	s.mu.Lock()
	delete(s.conns, c)
	s.mu.Unlock()
	c.Close()
}

func (s *Server) headerTimeout() time.Duration {
	if s.HeaderTimeout > 0 {
		return s.HeaderTimeout
	}
	return 10 * time.Second
}

// conn is one client connection, serving its requests in order.
type conn struct {
	srv *Server
	nc  net.Conn
	br  *bufio.Reader
	bw  *bufio.Writer
}

func (s *Server) serveConn(nc net.Conn) {
	defer s.untrack(nc)
	c := &conn{srv: s, nc: nc, br: bufio.NewReader(nc), bw: bufio.NewWriter(nc)}
	for {
		// Wait for the next request as long as it takes; then its head and
		// body must arrive within the timeout.
		if _, err := c.br.Peek(1); err != nil {
			return
		}
		_ = nc.SetReadDeadline(time.Now().Add(s.headerTimeout()))
		req, err := c.readRequest()
		_ = nc.SetReadDeadline(time.Time{})
		if err != nil {
			var he *httpError
			if errors.As(err, &he) {
				c.writeError(he.code, he.msg)
			}
			return
		}
		if !c.serve(req) {
			return
		}
	}
}

// httpError is a request the server answers itself and then closes.
type httpError struct {
	code int
	msg  string
}

func (e *httpError) Error() string { return fmt.Sprintf("%d %s", e.code, e.msg) }

func badRequest(format string, args ...any) error {
	return &httpError{code: 400, msg: fmt.Sprintf(format, args...)}
}

func (c *conn) readRequest() (*Request, error) {
	tp := textproto.NewReader(c.br)
	line, err := tp.ReadLine()
	if err != nil {
		return nil, err
	}
	method, rest, ok1 := strings.Cut(line, " ")
	target, proto, ok2 := strings.Cut(rest, " ")
	if !ok1 || !ok2 || method == "" || target == "" {
		return nil, badRequest("malformed request line")
	}
	if proto != "HTTP/1.1" && proto != "HTTP/1.0" {
		return nil, &httpError{code: 505, msg: "HTTP/1.0 and HTTP/1.1 only"}
	}
	u, err := url.ParseRequestURI(target)
	if err != nil {
		return nil, badRequest("malformed request target")
	}
	hdr, err := tp.ReadMIMEHeader()
	if err != nil {
		return nil, ioOr(err, badRequest("malformed header"))
	}
	r := &Request{Method: method, Target: target, Path: u.Path, Proto: proto, Header: hdr}
	if strings.EqualFold(hdr.Get("Expect"), "100-continue") && proto == "HTTP/1.1" {
		if _, err := c.bw.WriteString("HTTP/1.1 100 Continue\r\n\r\n"); err != nil {
			return nil, err
		}
		if err := c.bw.Flush(); err != nil {
			return nil, err
		}
	}
	if r.Body, err = c.readBody(hdr); err != nil {
		return nil, err
	}
	return r, nil
}

// readBody reads a body sent with Content-Length or chunked; none without either.
func (c *conn) readBody(hdr textproto.MIMEHeader) ([]byte, error) {
	te := hdr.Get("Transfer-Encoding")
	cl := hdr.Values("Content-Length")
	switch {
	case te != "" && len(cl) > 0:
		return nil, badRequest("both Transfer-Encoding and Content-Length")
	case te != "":
		if !strings.EqualFold(strings.TrimSpace(te), "chunked") {
			return nil, &httpError{code: 501, msg: "transfer coding " + te + " is not supported"}
		}
		return readChunked(c.br)
	case len(cl) > 1:
		return nil, badRequest("more than one Content-Length")
	case len(cl) == 1:
		n, err := strconv.ParseInt(strings.TrimSpace(cl[0]), 10, 64)
		if err != nil || n < 0 {
			return nil, badRequest("malformed Content-Length")
		}
		if n > MaxBody {
			return nil, &httpError{code: 413, msg: "request body over 64 MiB"}
		}
		body := make([]byte, n)
		if _, err := io.ReadFull(c.br, body); err != nil {
			return nil, err
		}
		return body, nil
	}
	return nil, nil
}

// readChunked decodes a chunked body (RFC 9112 §7.1), trailers skipped.
func readChunked(br *bufio.Reader) ([]byte, error) {
	tp := textproto.NewReader(br)
	var body []byte
	for {
		line, err := tp.ReadLine()
		if err != nil {
			return nil, err
		}
		sizeText, _, _ := strings.Cut(line, ";")
		size, err := strconv.ParseInt(strings.TrimSpace(sizeText), 16, 64)
		if err != nil || size < 0 {
			return nil, badRequest("malformed chunk size")
		}
		if size == 0 {
			if _, err := tp.ReadMIMEHeader(); err != nil { // trailers, up to the empty line
				return nil, ioOr(err, badRequest("malformed trailer"))
			}
			return body, nil
		}
		if int64(len(body))+size > MaxBody {
			return nil, &httpError{code: 413, msg: "request body over 64 MiB"}
		}
		start := len(body)
		body = append(body, make([]byte, size)...)
		if _, err := io.ReadFull(br, body[start:]); err != nil {
			return nil, err
		}
		crlf, err := tp.ReadLine()
		if err != nil {
			return nil, err
		}
		if crlf != "" {
			return nil, badRequest("chunk not followed by CRLF")
		}
	}
}

// serve runs the handler for r and writes its response; false means the
// connection must close.
func (c *conn) serve(r *Request) (keep bool) {
	ctx, cancel := context.WithCancel(c.srv.ctx)
	defer cancel()
	r.ctx = ctx
	w := &Response{c: c, req: r, header: make(textproto.MIMEHeader)}
	w.closeAfter = r.Header.Get("Connection") == "close" ||
		(r.Proto == "HTTP/1.0" && !strings.EqualFold(r.Header.Get("Connection"), "keep-alive"))

	// While the handler runs, a read notices the client going away (and
	// keeps a pipelined request's first bytes for the next round).
	watching := make(chan struct{})
	go func() {
		defer close(watching)
		if _, err := c.br.Peek(1); err != nil && !isTimeout(err) {
			cancel()
		}
	}()
	stopWatching := func() {
		_ = c.nc.SetReadDeadline(time.Unix(1, 0))
		<-watching
		_ = c.nc.SetReadDeadline(time.Time{})
	}

	aborted := func() (aborted bool) {
		defer func() {
			if p := recover(); p != nil {
				aborted = true
			}
		}()
		c.srv.Handler(w, r)
		return false
	}()
	stopWatching()
	if aborted {
		return false
	}
	if err := w.finish(); err != nil {
		return false
	}
	return !w.closeAfter
}

// ioOr is err when the connection failed (closed, timed out: nobody to
// answer), else the protocol error to answer with.
func ioOr(err error, protocol error) error {
	var pe textproto.ProtocolError
	if errors.As(err, &pe) {
		return protocol
	}
	return err
}

func isTimeout(err error) bool {
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}

// Response writes one response. The body is buffered until Flush or the
// handler's return: a response that was never flushed goes out with a
// Content-Length, a flushed one chunked (or until close, for HTTP/1.0).
type Response struct {
	c          *conn
	req        *Request
	header     textproto.MIMEHeader
	status     int
	buf        []byte
	sent       bool // status line and header written
	chunked    bool
	closeAfter bool
	err        error
}

// Header is the response header, to change before WriteHeader or the first Write.
func (w *Response) Header() textproto.MIMEHeader { return w.header }

// WriteHeader sets the status code; only the first call counts.
func (w *Response) WriteHeader(code int) {
	if w.status == 0 {
		w.status = code
	}
}

// Write adds p to the body.
func (w *Response) Write(p []byte) (int, error) {
	if w.err != nil {
		return 0, w.err
	}
	w.WriteHeader(200)
	if w.req.Method == "HEAD" {
		return len(p), nil
	}
	if !w.sent {
		w.buf = append(w.buf, p...)
		return len(p), nil
	}
	return len(p), w.writeBody(p)
}

// Flush sends what is written so far; the rest of the body follows chunked.
func (w *Response) Flush() {
	if w.err != nil {
		return
	}
	w.WriteHeader(200)
	if !w.sent {
		w.chunked = w.req.Proto == "HTTP/1.1"
		if !w.chunked {
			w.closeAfter = true
		}
		w.header.Del("Content-Length")
		w.err = w.writeHead(-1)
		if w.err == nil && len(w.buf) > 0 {
			w.err = w.writeBody(w.buf)
		}
		w.buf = nil
	}
	if w.err == nil {
		w.err = w.c.bw.Flush()
	}
}

func (w *Response) writeBody(p []byte) error {
	if len(p) == 0 {
		return nil
	}
	if w.chunked {
		if _, err := fmt.Fprintf(w.c.bw, "%x\r\n", len(p)); err != nil {
			return err
		}
	}
	if _, err := w.c.bw.Write(p); err != nil {
		return err
	}
	if w.chunked {
		_, err := w.c.bw.WriteString("\r\n")
		return err
	}
	return nil
}

// writeHead writes the status line and header; n >= 0 is the body's length.
func (w *Response) writeHead(n int) error {
	h := w.header
	if h.Get("Content-Type") == "" && n != 0 {
		h.Set("Content-Type", "text/plain; charset=utf-8")
	}
	if n >= 0 {
		h.Set("Content-Length", strconv.Itoa(n))
	}
	if w.chunked {
		h.Set("Transfer-Encoding", "chunked")
	}
	if w.closeAfter {
		h.Set("Connection", "close")
	}
	h.Set("Date", time.Now().UTC().Format("Mon, 02 Jan 2006 15:04:05 GMT"))
	bw := w.c.bw
	fmt.Fprintf(bw, "%s %d %s\r\n", w.req.Proto, w.status, StatusText(w.status))
	for k, vs := range h {
		for _, v := range vs {
			bw.WriteString(k)
			bw.WriteString(": ")
			bw.WriteString(oneLine(v))
			bw.WriteString("\r\n")
		}
	}
	_, err := bw.WriteString("\r\n")
	w.sent = true
	return err
}

// finish ends the response after the handler returned.
func (w *Response) finish() error {
	if w.err != nil {
		return w.err
	}
	w.WriteHeader(200)
	if !w.sent {
		if err := w.writeHead(len(w.buf)); err != nil {
			return err
		}
		if w.req.Method != "HEAD" {
			if _, err := w.c.bw.Write(w.buf); err != nil {
				return err
			}
		}
	} else if w.chunked {
		if _, err := w.c.bw.WriteString("0\r\n\r\n"); err != nil {
			return err
		}
	}
	return w.c.bw.Flush()
}

// oneLine keeps a header value on its line.
func oneLine(v string) string {
	return strings.Map(func(r rune) rune {
		if r == '\r' || r == '\n' {
			return ' '
		}
		return r
	}, v)
}

// Error answers with code and a plain-text message.
func Error(w *Response, msg string, code int) {
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.WriteHeader(code)
	_, _ = io.WriteString(w, msg+"\n")
}

func (c *conn) writeError(code int, msg string) {
	fmt.Fprintf(c.bw, "HTTP/1.1 %d %s\r\nContent-Type: text/plain; charset=utf-8\r\nConnection: close\r\nContent-Length: %d\r\n\r\n%s\n",
		code, StatusText(code), len(msg)+1, msg)
	_ = c.bw.Flush()
}

// StatusText is the reason phrase of the codes model-sim and this server use.
func StatusText(code int) string {
	switch code {
	case 100:
		return "Continue"
	case 200:
		return "OK"
	case 400:
		return "Bad Request"
	case 404:
		return "Not Found"
	case 413:
		return "Content Too Large"
	case 429:
		return "Too Many Requests"
	case 500:
		return "Internal Server Error"
	case 501:
		return "Not Implemented"
	case 503:
		return "Service Unavailable"
	case 505:
		return "HTTP Version Not Supported"
	}
	return "Status " + strconv.Itoa(code)
}
