package netproxy

import (
	"bufio"
	"fmt"
	"net"
	"net/http"
	"strings"
)

// Bridge runs inside the sandbox's network namespace, whose only network
// is its loopback. It listens there and carries each connection to the
// proxy's Unix socket, which the sandbox's filesystem shows it:
//   - on its proxy address (ProxyURL), byte for byte: the command talks
//     HTTP proxy to the proxy itself;
//   - on each Forward's Listen address (the loopback address a model
//     endpoint on this machine has outside), through a CONNECT to its
//     Dest: a program that dials it directly, ignoring the proxy
//     variables, still reaches it, and only while the proxy allows it.
type Bridge struct {
	Socket  string
	Forward []Forward

	proxy net.Listener
	lns   []net.Listener
}

// Forward is a loopback address the bridge listens on and the
// destination it asks the proxy for.
type Forward struct{ Listen, Dest string }

// Start opens the bridge's listeners and serves them until Close. The
// forwards' fixed ports are taken first, so the proxy's own (any free
// one) is never one of them.
func (b *Bridge) Start() error {
	for _, f := range b.Forward {
		fl, err := net.Listen("tcp", f.Listen)
		if err != nil {
			b.Close()
			return fmt.Errorf("netproxy: bridge: forward %s: %w", f.Listen, err)
		}
		b.lns = append(b.lns, fl)
		go b.serve(fl, f.Dest)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Close()
		return fmt.Errorf("netproxy: bridge: %w", err)
	}
	b.proxy = ln
	b.lns = append(b.lns, ln)
	go b.serve(ln, "")
	return nil
}

// ProxyURL is the proxy's address inside the namespace.
func (b *Bridge) ProxyURL() string { return "http://" + b.proxy.Addr().String() }

// Close stops listening.
func (b *Bridge) Close() {
	for _, ln := range b.lns {
		ln.Close()
	}
}

func (b *Bridge) serve(ln net.Listener, dest string) {
	for {
		c, err := ln.Accept()
		if err != nil {
			return
		}
		go b.carry(c, dest)
	}
}

// carry joins c to the proxy: as it is, or through a CONNECT to dest.
func (b *Bridge) carry(c net.Conn, dest string) {
	up, err := net.Dial("unix", b.Socket)
	if err != nil {
		c.Close()
		return
	}
	if dest != "" {
		if err := tunnel(up, dest); err != nil {
			up.Close()
			c.Close()
			return
		}
	}
	Splice(c, up)
}

// tunnel asks the proxy on up for a tunnel to dest.
func tunnel(up net.Conn, dest string) error {
	if _, err := fmt.Fprintf(up, "CONNECT %s HTTP/1.1\r\nHost: %s\r\n\r\n", dest, dest); err != nil {
		return err
	}
	br := bufio.NewReader(up)
	resp, err := http.ReadResponse(br, &http.Request{Method: http.MethodConnect})
	if err != nil {
		return err
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("proxy refused %s: %s", dest, resp.Status)
	}
	if br.Buffered() > 0 {
		return fmt.Errorf("proxy sent %d bytes before the tunnel opened", br.Buffered())
	}
	return nil
}

// Env are the proxy variables a command inside uses to reach proxyURL,
// in both cases, with no host exempt.
func Env(proxyURL string) map[string]string {
	env := map[string]string{}
	for _, k := range []string{"HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY"} {
		env[k] = proxyURL
		env[strings.ToLower(k)] = proxyURL
	}
	env["NO_PROXY"], env["no_proxy"] = "", ""
	return env
}
