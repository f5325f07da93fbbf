// Package netproxy lets a sandboxed command reach only the hosts it is
// allowed: an HTTP proxy (CONNECT for https, absolute URIs for plain http)
// that runs outside the sandbox and refuses every other destination with
// 403, and the bridge that runs inside it, in a network namespace with a
// loopback only, and carries the command's connections to that proxy over
// a Unix socket.
package netproxy

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httputil"
	"strings"
	"sync"
	"time"
)

// Rule is one allowed destination: a host name or IP address, or "*."
// before a domain (any name below it, not the domain itself), and a port
// ("" = any).
type Rule struct {
	Host string
	Port string
}

// ParseRule reads "host", "host:port", "*.domain", "*.domain:port" or an
// IP address (IPv6 in brackets when a port follows).
func ParseRule(s string) (Rule, error) {
	s = strings.TrimSpace(s)
	host, port := s, ""
	if h, p, err := net.SplitHostPort(s); err == nil {
		host, port = h, p
	} else if strings.HasPrefix(s, "[") && strings.HasSuffix(s, "]") {
		host = s[1 : len(s)-1]
	}
	host = normalHost(host)
	if host == "" || host == "*." || strings.ContainsAny(host, " /@") || strings.Contains(strings.TrimPrefix(host, "*."), "*") {
		return Rule{}, fmt.Errorf("netproxy: %q is not a host, host:port or *.domain", s)
	}
	if port != "" {
		if _, err := net.LookupPort("tcp", port); err != nil || strings.Trim(port, "0123456789") != "" {
			return Rule{}, fmt.Errorf("netproxy: %q: bad port %q", s, port)
		}
	}
	return Rule{Host: host, Port: port}, nil
}

// String is the rule as ParseRule reads it.
func (r Rule) String() string {
	if r.Port == "" {
		if strings.Contains(r.Host, ":") {
			return "[" + r.Host + "]"
		}
		return r.Host
	}
	return net.JoinHostPort(r.Host, r.Port)
}

// Match reports whether host:port is the rule's destination.
func (r Rule) Match(host, port string) bool {
	if r.Port != "" && r.Port != port {
		return false
	}
	host = normalHost(host)
	if d, ok := strings.CutPrefix(r.Host, "*."); ok {
		return strings.HasSuffix(host, "."+d)
	}
	return host == r.Host
}

func normalHost(h string) string { return strings.TrimSuffix(strings.ToLower(h), ".") }

// Allow is the list of allowed destinations.
type Allow []Rule

// ParseAllow reads each entry with ParseRule.
func ParseAllow(entries []string) (Allow, error) {
	var a Allow
	for _, e := range entries {
		r, err := ParseRule(e)
		if err != nil {
			return nil, err
		}
		a = append(a, r)
	}
	return a, nil
}

// Permits reports whether hostport ("host:port") is allowed.
func (a Allow) Permits(hostport string) bool {
	host, port, err := net.SplitHostPort(hostport)
	if err != nil {
		return false
	}
	for _, r := range a {
		if r.Match(host, port) {
			return true
		}
	}
	return false
}

// Proxy is the HTTP proxy outside the sandbox. It dials only destinations
// Allow permits and answers every other request 403, with a line in Log.
type Proxy struct {
	Allow Allow
	// Log gets one line per request: allowed or refused, and where to.
	Log io.Writer
	// Dial connects to an allowed destination (a net.Dialer's when nil).
	Dial func(ctx context.Context, network, addr string) (net.Conn, error)

	once    sync.Once
	forward *httputil.ReverseProxy
	logMu   sync.Mutex
}

// dialTimeout bounds one connection to an allowed destination.
const dialTimeout = 30 * time.Second

func (p *Proxy) dial(ctx context.Context, network, addr string) (net.Conn, error) {
	if p.Dial != nil {
		return p.Dial(ctx, network, addr)
	}
	d := net.Dialer{Timeout: dialTimeout}
	return d.DialContext(ctx, network, addr)
}

func (p *Proxy) logf(format string, args ...any) {
	if p.Log == nil {
		return
	}
	p.logMu.Lock()
	defer p.logMu.Unlock()
	fmt.Fprintf(p.Log, time.Now().UTC().Format(time.RFC3339)+" "+format+"\n", args...)
}

// ServeHTTP handles one proxy request.
func (p *Proxy) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method == http.MethodConnect {
		p.connect(w, r)
		return
	}
	if !r.URL.IsAbs() || r.URL.Scheme != "http" || r.URL.Host == "" {
		p.logf("refused %s %s: not a proxy request (an absolute http:// URI, or CONNECT)", r.Method, r.RequestURI)
		http.Error(w, "story-automator sandbox: send an absolute http:// URI, or CONNECT for https", http.StatusBadRequest)
		return
	}
	dest := r.URL.Host
	if r.URL.Port() == "" {
		dest = net.JoinHostPort(r.URL.Hostname(), "80")
	}
	if !p.Allow.Permits(dest) {
		p.refuse(w, r.Method, dest)
		return
	}
	p.logf("allowed %s %s", r.Method, dest)
	p.once.Do(func() {
		p.forward = &httputil.ReverseProxy{
			// The request already names its destination (an absolute URI).
			Rewrite:   func(*httputil.ProxyRequest) {},
			Transport: &http.Transport{DialContext: p.dial, Proxy: nil, ForceAttemptHTTP2: false},
			ErrorLog:  nil,
		}
	})
	p.forward.ServeHTTP(w, r)
}

func (p *Proxy) refuse(w http.ResponseWriter, method, dest string) {
	p.logf("refused %s %s: not an allowed host (sandbox.network)", method, dest)
	http.Error(w, "story-automator sandbox: "+dest+" is not an allowed host; add it to sandbox.network in workflow.yaml", http.StatusForbidden)
}

// connect opens a tunnel to an allowed destination.
func (p *Proxy) connect(w http.ResponseWriter, r *http.Request) {
	dest := r.Host
	if _, _, err := net.SplitHostPort(dest); err != nil {
		http.Error(w, "story-automator sandbox: CONNECT needs host:port", http.StatusBadRequest)
		return
	}
	if !p.Allow.Permits(dest) {
		p.refuse(w, "CONNECT", dest)
		return
	}
	up, err := p.dial(r.Context(), "tcp", dest)
	if err != nil {
		p.logf("failed CONNECT %s: %v", dest, err)
		http.Error(w, "story-automator sandbox: "+err.Error(), http.StatusBadGateway)
		return
	}
	hj, ok := w.(http.Hijacker)
	if !ok {
		up.Close()
		http.Error(w, "story-automator sandbox: cannot tunnel", http.StatusInternalServerError)
		return
	}
	down, buf, err := hj.Hijack()
	if err != nil {
		up.Close()
		return
	}
	p.logf("allowed CONNECT %s", dest)
	if _, err := io.WriteString(down, "HTTP/1.1 200 Connection established\r\n\r\n"); err != nil {
		up.Close()
		down.Close()
		return
	}
	// Bytes the client sent after its request, already read into buf.
	if n := buf.Reader.Buffered(); n > 0 {
		b, _ := buf.Peek(n)
		if _, err := up.Write(b); err != nil {
			up.Close()
			down.Close()
			return
		}
	}
	Splice(down, up)
}

// Serve answers proxy requests on ln until it is closed.
func (p *Proxy) Serve(ln net.Listener) error {
	srv := &http.Server{Handler: p, ReadHeaderTimeout: dialTimeout}
	err := srv.Serve(ln)
	if errors.Is(err, net.ErrClosed) || errors.Is(err, http.ErrServerClosed) {
		return nil
	}
	return err
}

// Splice copies both ways between a and b until both directions end, then
// closes both.
func Splice(a, b net.Conn) {
	var wg sync.WaitGroup
	wg.Add(2)
	half := func(dst, src net.Conn) {
		defer wg.Done()
		_, _ = io.Copy(dst, src)
		if cw, ok := dst.(interface{ CloseWrite() error }); ok {
			_ = cw.CloseWrite()
		} else {
			_ = dst.Close()
		}
	}
	go half(a, b)
	go half(b, a)
	wg.Wait()
	a.Close()
	b.Close()
}

// Loopback are the forwards a sandbox's bridge needs for the rules that
// name a port on this machine's loopback (127.0.0.1:PORT, [::1]:PORT,
// localhost:PORT): inside its network namespace those addresses are the
// namespace's own, so the bridge listens on each and asks the proxy for
// the rule's destination.
func (a Allow) Loopback() []Forward {
	var out []Forward
	seen := map[string]bool{}
	for _, r := range a {
		if r.Port == "" {
			continue
		}
		var listen []string
		switch ip := net.ParseIP(r.Host); {
		case r.Host == "localhost":
			listen = []string{"127.0.0.1"}
		case ip != nil && ip.IsLoopback():
			listen = []string{r.Host}
		}
		for _, h := range listen {
			l := net.JoinHostPort(h, r.Port)
			if !seen[l] {
				seen[l] = true
				out = append(out, Forward{Listen: l, Dest: r.String()})
			}
		}
	}
	return out
}
