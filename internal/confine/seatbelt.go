package confine

import (
	"fmt"
	"os"
	"strings"
)

// seatbeltArgs is sandbox-exec's argv (after the program) for p, resolved,
// then argv; TMPDIR is set by env, as Seatbelt mounts nothing.
func seatbeltArgs(p Policy, argv []string) []string {
	args := []string{"-p", seatbeltProfile(p)}
	if p.TmpDir != "" {
		args = append(args, "/usr/bin/env", "TMPDIR="+p.TmpDir)
	}
	return append(args, argv...)
}

// seatbeltProfile is the Seatbelt profile for p. The rules are ordered so
// that both ways Seatbelt is described to settle a conflict (the later rule
// wins; the more specific filter wins, deny over allow when equal) give the
// same answer: writes denied, then allowed under the writable folders; the
// read-only paths and the hidden paths denied last. Seatbelt cannot show a
// hidden folder empty: it refuses to open it.
func seatbeltProfile(p Policy) string {
	var b strings.Builder
	b.WriteString("(version 1)\n(allow default)\n(deny file-write*)\n")
	b.WriteString("(allow file-write*\n")
	for _, w := range p.Writable {
		b.WriteString("  (subpath " + sbString(w) + ")\n")
	}
	if p.TmpDir != "" {
		b.WriteString("  (subpath " + sbString(p.TmpDir) + ")\n")
	}
	b.WriteString("  (literal \"/dev/null\") (literal \"/dev/zero\") (literal \"/dev/tty\")\n")
	b.WriteString("  (regex #\"^/dev/fd/\") (regex #\"^/dev/ttys[0-9]+$\"))\n")
	if len(p.ReadOnly) > 0 {
		b.WriteString("(deny file-write*\n")
		for _, r := range p.ReadOnly {
			b.WriteString("  (subpath " + sbString(r) + ")\n")
		}
		b.WriteString(")\n")
	}
	if len(p.ReadDeny) > 0 {
		b.WriteString("(deny file-read* file-write*\n")
		for _, d := range p.ReadDeny {
			if fi, err := os.Stat(d); err == nil && fi.IsDir() {
				b.WriteString("  (subpath " + sbString(d) + ")\n")
			} else {
				b.WriteString("  (literal " + sbString(d) + ")\n")
			}
		}
		b.WriteString(")\n")
	}
	if !p.Network {
		b.WriteString("(deny network*)\n")
		// A narrowed network (Policy.Net): only the proxy's loopback
		// port, and a model endpoint's there.
		for _, port := range p.proxyPorts {
			fmt.Fprintf(&b, "(allow network-outbound (remote ip \"localhost:%d\"))\n", port)
		}
	}
	return b.String()
}

// sbString quotes s as a profile string literal.
func sbString(s string) string {
	return `"` + strings.NewReplacer(`\`, `\\`, `"`, `\"`).Replace(s) + `"`
}
