package netproxy

import (
	"bufio"
	"bytes"
	"context"
	"crypto/tls"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
)

func TestParseRuleReadsHostsPortsAndWildcards(t *testing.T) {
	for in, want := range map[string]Rule{
		"pypi.org":             {Host: "pypi.org"},
		"PyPI.org.":            {Host: "pypi.org"},
		"*.pypi.org":           {Host: "*.pypi.org"},
		"127.0.0.1:8080":       {Host: "127.0.0.1", Port: "8080"},
		"[::1]:443":            {Host: "::1", Port: "443"},
		"[::1]":                {Host: "::1"},
		"api.example.com:8443": {Host: "api.example.com", Port: "8443"},
	} {
		got, err := ParseRule(in)
		if err != nil || got != want {
			t.Errorf("ParseRule(%q) = %+v, %v; want %+v", in, got, err, want)
		}
		if again, err := ParseRule(got.String()); err != nil || again != got {
			t.Errorf("%q does not read back: %+v, %v", got.String(), again, err)
		}
	}
	for _, bad := range []string{"", "*.", "a b", "http://x.org", "x.org:http", "x.org:99999x", "foo*.com", "*.*.com"} {
		if r, err := ParseRule(bad); err == nil {
			t.Errorf("ParseRule(%q) = %+v, want an error", bad, r)
		}
	}
}

func TestAllowPermitsOnlyItsHostsAndPorts(t *testing.T) {
	a, err := ParseAllow([]string{"*.pypi.org", "files.pythonhosted.org", "127.0.0.1:4000"})
	if err != nil {
		t.Fatal(err)
	}
	for dest, want := range map[string]bool{
		"cdn.pypi.org:443":            true,
		"A.B.PYPI.ORG.:443":           true,
		"pypi.org:443":                false, // *. names the names below, not the domain
		"evilpypi.org:443":            false,
		"pypi.org.evil.com:443":       false,
		"files.pythonhosted.org:80":   true,
		"127.0.0.1:4000":              true,
		"127.0.0.1:4001":              false,
		"localhost:4000":              false,
		"files.pythonhosted.org":      false, // no port: not a destination
		"x.files.pythonhosted.org:80": false,
	} {
		if got := a.Permits(dest); got != want {
			t.Errorf("Permits(%q) = %v, want %v", dest, got, want)
		}
	}
}

// server counts the requests it answers.
type server struct {
	*httptest.Server
	hits atomic.Int32
}

func newServer(t *testing.T, tlsOn bool, body string) *server {
	s := &server{}
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.hits.Add(1)
		_, _ = io.WriteString(w, body)
	})
	if tlsOn {
		s.Server = httptest.NewTLSServer(h)
	} else {
		s.Server = httptest.NewServer(h)
	}
	t.Cleanup(s.Close)
	return s
}

func hostport(t *testing.T, raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		t.Fatal(err)
	}
	return u.Host
}

// syncBuffer is a log the proxy's goroutines write.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// startProxy serves a proxy allowing allow on a loopback port.
func startProxy(t *testing.T, p *Proxy) string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() { _ = p.Serve(ln) }()
	return "http://" + ln.Addr().String()
}

func client(t *testing.T, proxyURL string, roots *httptest.Server) *http.Client {
	u, _ := url.Parse(proxyURL)
	tr := &http.Transport{Proxy: http.ProxyURL(u)}
	if roots != nil {
		tr.TLSClientConfig = &tls.Config{RootCAs: roots.Client().Transport.(*http.Transport).TLSClientConfig.RootCAs}
	}
	t.Cleanup(tr.CloseIdleConnections)
	return &http.Client{Transport: tr}
}

func get(c *http.Client, u string) (int, string, error) {
	resp, err := c.Get(u)
	if err != nil {
		return 0, "", err
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b), nil
}

// Plain http: the allowed server answers through the proxy; the other is
// refused with 403 and a log line, and never sees the request.
func TestProxyForwardsPlainRequestsOnlyToAllowedHosts(t *testing.T) {
	allowed, other := newServer(t, false, "allowed"), newServer(t, false, "other")
	log := &syncBuffer{}
	rules, _ := ParseAllow([]string{hostport(t, allowed.URL)})
	c := client(t, startProxy(t, &Proxy{Allow: rules, Log: log}), nil)

	if code, body, err := get(c, allowed.URL+"/x"); err != nil || code != 200 || body != "allowed" {
		t.Fatalf("allowed host: %d %q %v", code, body, err)
	}
	code, body, err := get(c, other.URL+"/x")
	if err != nil || code != http.StatusForbidden || !strings.Contains(body, "sandbox.network") {
		t.Fatalf("other host: %d %q %v; want 403 naming sandbox.network", code, body, err)
	}
	if !strings.Contains(log.String(), "refused GET "+hostport(t, other.URL)) {
		t.Fatalf("no refusal in the log:\n%s", log)
	}
	// The control reaches the other server directly: the proxy's
	// request, had there been one, was counted before it.
	if code, _, err := get(http.DefaultClient, other.URL); err != nil || code != 200 {
		t.Fatalf("control: %d %v", code, err)
	}
	if n := other.hits.Load(); n != 1 {
		t.Fatalf("the refused server answered %d requests, want only the control's", n)
	}
}

// https: a CONNECT tunnel to the allowed server, TLS end to end; a CONNECT
// to another is refused with 403.
func TestProxyTunnelsConnectOnlyToAllowedHosts(t *testing.T) {
	allowed, other := newServer(t, true, "allowed"), newServer(t, true, "other")
	log := &syncBuffer{}
	rules, _ := ParseAllow([]string{hostport(t, allowed.URL)})
	proxyURL := startProxy(t, &Proxy{Allow: rules, Log: log})

	if code, body, err := get(client(t, proxyURL, allowed.Server), allowed.URL); err != nil || code != 200 || body != "allowed" {
		t.Fatalf("allowed host: %d %q %v", code, body, err)
	}
	_, _, err := get(client(t, proxyURL, other.Server), other.URL)
	if err == nil || !strings.Contains(err.Error(), "Forbidden") {
		t.Fatalf("other host through CONNECT: %v, want a 403", err)
	}
	if !strings.Contains(log.String(), "allowed CONNECT "+hostport(t, allowed.URL)) ||
		!strings.Contains(log.String(), "refused CONNECT "+hostport(t, other.URL)) {
		t.Fatalf("log:\n%s", log)
	}
	if code, _, err := get(other.Client(), other.URL); err != nil || code != 200 {
		t.Fatalf("control: %d %v", code, err)
	}
	if n := other.hits.Load(); n != 1 {
		t.Fatalf("the refused server answered %d requests, want only the control's", n)
	}
}

// A request that is not a proxy request (an origin-form path) is refused.
func TestProxyRefusesOriginFormRequests(t *testing.T) {
	proxyURL := startProxy(t, &Proxy{})
	code, _, err := get(http.DefaultClient, proxyURL+"/etc")
	if err != nil || code != http.StatusBadRequest {
		t.Fatalf("got %d %v, want 400", code, err)
	}
}

// The bridge: its proxy address talks to the proxy on the Unix socket; a
// forwarded loopback address reaches its destination through a CONNECT,
// only while the proxy allows it.
func TestBridgeCarriesProxyAndForwardedConnections(t *testing.T) {
	model, other := newServer(t, false, "model"), newServer(t, false, "other")
	// The forwarded address stands for the model's own (inside a sandbox
	// the bridge listens on the very address the model has outside).
	free, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	fwd := free.Addr().String()
	free.Close()
	rules, _ := ParseAllow([]string{fwd})
	log := &syncBuffer{}
	p := &Proxy{Allow: rules, Log: log, Dial: func(ctx context.Context, network, addr string) (net.Conn, error) {
		if addr == fwd {
			addr = hostport(t, model.URL)
		}
		return (&net.Dialer{}).DialContext(ctx, network, addr)
	}}
	sock := filepath.Join(t.TempDir(), "net.sock")
	ln, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() { _ = p.Serve(ln) }()

	b := &Bridge{Socket: sock, Forward: []Forward{{Listen: fwd, Dest: fwd}}}
	if err := b.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(b.Close)
	if code, body, err := get(http.DefaultClient, "http://"+fwd+"/v1"); err != nil || code != 200 || body != "model" {
		t.Fatalf("forwarded address: %d %q %v", code, body, err)
	}
	c := client(t, b.ProxyURL(), nil)
	if code, body, err := get(c, "http://"+fwd+"/v1"); err != nil || code != 200 || body != "model" {
		t.Fatalf("through the bridge's proxy address: %d %q %v", code, body, err)
	}
	if code, _, err := get(c, other.URL); err != nil || code != http.StatusForbidden {
		t.Fatalf("other host through the bridge: %d %v, want 403", code, err)
	}
	if env := Env(b.ProxyURL()); env["https_proxy"] != b.ProxyURL() || env["ALL_PROXY"] != b.ProxyURL() || env["NO_PROXY"] != "" {
		t.Fatalf("Env: %v", env)
	}
	// Behind a proxy that does not allow the forwarded address, the
	// bridge's connection to it is closed unanswered.
	refusing := &Proxy{Log: log}
	sock2 := filepath.Join(t.TempDir(), "net.sock")
	ln2, err := net.Listen("unix", sock2)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln2.Close() })
	go func() { _ = refusing.Serve(ln2) }()
	free2, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	fwd2 := free2.Addr().String()
	free2.Close()
	b2 := &Bridge{Socket: sock2, Forward: []Forward{{Listen: fwd2, Dest: fwd}}}
	if err := b2.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(b2.Close)
	conn, err := net.Dial("tcp", fwd2)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	_, _ = io.WriteString(conn, "GET /v1 HTTP/1.1\r\nHost: x\r\n\r\n")
	if line, err := bufio.NewReader(conn).ReadString('\n'); err == nil {
		t.Fatalf("a refused forward answered %q", line)
	}
	if !strings.Contains(log.String(), "refused CONNECT "+fwd) {
		t.Fatalf("the refusal is not in the log:\n%s", log)
	}
}

func TestAllowLoopbackForwardsOnlyLoopbackPorts(t *testing.T) {
	a, err := ParseAllow([]string{"127.0.0.1:4000", "localhost:11434", "[::1]:5000", "127.0.0.1", "pypi.org:443", "10.0.0.1:80"})
	if err != nil {
		t.Fatal(err)
	}
	got := a.Loopback()
	want := []Forward{{"127.0.0.1:4000", "127.0.0.1:4000"}, {"127.0.0.1:11434", "localhost:11434"}, {"[::1]:5000", "[::1]:5000"}}
	if len(got) != len(want) {
		t.Fatalf("Loopback() = %v, want %v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("Loopback() = %v, want %v", got, want)
		}
	}
}
