package loophttp

import (
	"bufio"
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptrace"
	"strings"
	"testing"
	"time"
)

// start serves h on a loopback port until the test ends.
func start(t *testing.T, s *Server) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	served := make(chan error, 1)
	go func() { served <- s.Serve(ln) }()
	t.Cleanup(func() {
		s.Close()
		if err := <-served; !errors.Is(err, ErrServerClosed) {
			t.Errorf("Serve returned %v, want ErrServerClosed", err)
		}
	})
	return ln.Addr().String()
}

func dial(t *testing.T, addr string) (net.Conn, *bufio.Reader) {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c, bufio.NewReader(c)
}

func readResponse(t *testing.T, br *bufio.Reader, method string) (*http.Response, string) {
	t.Helper()
	resp, err := http.ReadResponse(br, &http.Request{Method: method})
	if err != nil {
		t.Fatalf("read response: %v", err)
	}
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("read body: %v", err)
	}
	return resp, string(b)
}

// echo answers with the method, path, target and body it got.
func echo(w *Response, r *Request) {
	w.Header().Set("Content-Type", "text/plain")
	io.WriteString(w, r.Method+" "+r.Path+" "+r.Target+" "+string(r.Body))
}

func TestKeepAliveAnswersPipelinedRequestsInOrder(t *testing.T) {
	addr := start(t, &Server{Handler: echo})
	c, br := dial(t, addr)
	io.WriteString(c, "POST /v1/a%20b?x=1 HTTP/1.1\r\nHost: h\r\nContent-Length: 5\r\n\r\nhello"+
		"GET /second HTTP/1.1\r\nHost: h\r\n\r\n")
	resp, body := readResponse(t, br, "POST")
	if resp.StatusCode != 200 || body != "POST /v1/a b /v1/a%20b?x=1 hello" || resp.ContentLength != int64(len(body)) {
		t.Fatalf("first: %d %q (length %d)", resp.StatusCode, body, resp.ContentLength)
	}
	resp, body = readResponse(t, br, "GET")
	if resp.StatusCode != 200 || body != "GET /second /second " || resp.Close {
		t.Fatalf("second: %d %q close=%v", resp.StatusCode, body, resp.Close)
	}
}

func TestChunkedRequestBodyIsDecoded(t *testing.T) {
	addr := start(t, &Server{Handler: echo})
	c, br := dial(t, addr)
	io.WriteString(c, "POST /c HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n"+
		"5;ext=1\r\nhello\r\n7\r\n, world\r\n0\r\nTrailer: x\r\n\r\n")
	_, body := readResponse(t, br, "POST")
	if body != "POST /c /c hello, world" {
		t.Fatalf("body %q", body)
	}
}

func TestExpectContinueGetsTheInterimAnswerBeforeTheBody(t *testing.T) {
	addr := start(t, &Server{Handler: echo})
	c, br := dial(t, addr)
	io.WriteString(c, "POST /e HTTP/1.1\r\nHost: h\r\nExpect: 100-continue\r\nContent-Length: 2\r\n\r\n")
	line, err := br.ReadString('\n')
	if err != nil || line != "HTTP/1.1 100 Continue\r\n" {
		t.Fatalf("interim line %q, %v", line, err)
	}
	if blank, _ := br.ReadString('\n'); blank != "\r\n" {
		t.Fatalf("interim answer not ended: %q", blank)
	}
	io.WriteString(c, "ok")
	if _, body := readResponse(t, br, "POST"); body != "POST /e /e ok" {
		t.Fatalf("body %q", body)
	}
}

func TestAFlushedResponseStreamsChunked(t *testing.T) {
	release := make(chan struct{})
	addr := start(t, &Server{Handler: func(w *Response, r *Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		io.WriteString(w, "data: one\n\n")
		w.Flush()
		<-release
		io.WriteString(w, "data: two\n\n")
	}})
	c, br := dial(t, addr)
	io.WriteString(c, "GET /s HTTP/1.1\r\nHost: h\r\n\r\n")
	resp, err := http.ReadResponse(br, &http.Request{Method: "GET"})
	if err != nil {
		t.Fatal(err)
	}
	if len(resp.TransferEncoding) != 1 || resp.TransferEncoding[0] != "chunked" {
		t.Fatalf("transfer encoding %v", resp.TransferEncoding)
	}
	first := make([]byte, len("data: one\n\n"))
	if _, err := io.ReadFull(resp.Body, first); err != nil || string(first) != "data: one\n\n" {
		t.Fatalf("first event %q, %v (it must arrive before the handler returns)", first, err)
	}
	close(release)
	rest, err := io.ReadAll(resp.Body)
	if err != nil || string(rest) != "data: two\n\n" {
		t.Fatalf("rest %q, %v", rest, err)
	}
}

func TestTheClientGoingAwayEndsTheRequestContext(t *testing.T) {
	ended := make(chan struct{})
	waiting := make(chan struct{})
	addr := start(t, &Server{Handler: func(w *Response, r *Request) {
		close(waiting)
		<-r.Context().Done()
		close(ended)
	}})
	c, _ := dial(t, addr)
	io.WriteString(c, "GET /hang HTTP/1.1\r\nHost: h\r\n\r\n")
	<-waiting
	c.Close()
	<-ended
}

func TestCloseEndsRunningHandlersAndConnections(t *testing.T) {
	waiting := make(chan struct{})
	s := &Server{Handler: func(w *Response, r *Request) {
		close(waiting)
		<-r.Context().Done()
		panic(ErrAbort)
	}}
	addr := start(t, s)
	c, br := dial(t, addr)
	io.WriteString(c, "GET /hang HTTP/1.1\r\nHost: h\r\n\r\n")
	<-waiting
	s.Close()
	if b, err := br.ReadByte(); err == nil {
		t.Fatalf("got %q after Close, want the connection closed without an answer", b)
	}
	if _, err := net.Dial("tcp", addr); err == nil {
		t.Fatal("the listener still accepts after Close")
	}
}

func TestAbortDropsTheConnectionWithoutAnAnswer(t *testing.T) {
	addr := start(t, &Server{Handler: func(w *Response, r *Request) {
		io.WriteString(w, "never sent")
		panic(ErrAbort)
	}})
	c, br := dial(t, addr)
	io.WriteString(c, "GET / HTTP/1.1\r\nHost: h\r\n\r\n")
	if rest, _ := io.ReadAll(br); len(rest) != 0 {
		t.Fatalf("got %q, want nothing", rest)
	}
}

func TestBadRequestsAreRefusedAndClosed(t *testing.T) {
	for _, tc := range []struct {
		name, request string
		code          int
	}{
		{"no target", "GET\r\n\r\n", 400},
		{"not http", "GET / SPDY/3\r\n\r\n", 505},
		{"relative target", "GET a/b HTTP/1.1\r\n\r\n", 400},
		{"both lengths", "POST / HTTP/1.1\r\nContent-Length: 1\r\nTransfer-Encoding: chunked\r\n\r\n", 400},
		{"two lengths", "POST / HTTP/1.1\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\nab", 400},
		{"bad length", "POST / HTTP/1.1\r\nContent-Length: -1\r\n\r\n", 400},
		{"too large", "POST / HTTP/1.1\r\nContent-Length: 67108865\r\n\r\n", 413},
		{"gzip coding", "POST / HTTP/1.1\r\nTransfer-Encoding: gzip\r\n\r\n", 501},
		{"bad chunk", "POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n", 400},
		{"bad header", "GET / HTTP/1.1\r\nno colon here\r\n\r\n", 400},
	} {
		t.Run(tc.name, func(t *testing.T) {
			called := false
			addr := start(t, &Server{Handler: func(w *Response, r *Request) { called = true }})
			c, br := dial(t, addr)
			io.WriteString(c, tc.request)
			resp, _ := readResponse(t, br, "GET")
			if resp.StatusCode != tc.code || !resp.Close {
				t.Fatalf("got %d close=%v, want %d and close", resp.StatusCode, resp.Close, tc.code)
			}
			if rest, _ := io.ReadAll(br); len(rest) != 0 {
				t.Fatalf("connection not closed: %q", rest)
			}
			if called {
				t.Fatal("the handler ran for a refused request")
			}
		})
	}
}

func TestHTTP10ClosesAfterTheAnswer(t *testing.T) {
	addr := start(t, &Server{Handler: echo})
	c, br := dial(t, addr)
	io.WriteString(c, "GET /old HTTP/1.0\r\n\r\n")
	resp, body := readResponse(t, br, "GET")
	if body != "GET /old /old " || !resp.Close {
		t.Fatalf("%q close=%v", body, resp.Close)
	}
	if rest, _ := io.ReadAll(br); len(rest) != 0 {
		t.Fatalf("connection not closed: %q", rest)
	}
}

func TestAStalledRequestHeadIsDropped(t *testing.T) {
	addr := start(t, &Server{Handler: echo, HeaderTimeout: 50 * time.Millisecond})
	c, br := dial(t, addr)
	io.WriteString(c, "GET / HTTP/1.1\r\nHost:")
	// The server's read deadline ends the connection; the read returns then.
	if rest, err := io.ReadAll(br); err != nil || len(rest) != 0 {
		t.Fatalf("got %q, %v; want the connection closed", rest, err)
	}
}

func TestNetHTTPClientReusesItsConnection(t *testing.T) {
	addr := start(t, &Server{Handler: func(w *Response, r *Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(201)
		io.WriteString(w, `{"got":"`+string(r.Body)+`"}`)
	}})
	reused := 0
	trace := &httptrace.ClientTrace{GotConn: func(info httptrace.GotConnInfo) {
		if info.Reused {
			reused++
		}
	}}
	client := &http.Client{}
	for i := 0; i < 3; i++ {
		req, _ := http.NewRequestWithContext(httptrace.WithClientTrace(context.Background(), trace),
			"POST", "http://"+addr+"/v1/responses", strings.NewReader("x"))
		resp, err := client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 201 || string(b) != `{"got":"x"}` || resp.Header.Get("Content-Type") != "application/json" {
			t.Fatalf("%d %q %v", resp.StatusCode, b, resp.Header)
		}
	}
	if reused != 2 {
		t.Fatalf("%d of 3 requests reused the connection, want 2", reused)
	}
}
