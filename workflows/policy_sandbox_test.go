package workflows

import (
	"reflect"
	"strings"
	"testing"
)

func TestPolicyReadsTheSandbox(t *testing.T) {
	cases := map[string]Sandbox{
		"":                          {},
		"sandbox: off":              {Off: true},
		"sandbox: on":               {},
		"sandbox: {enabled: false}": {Off: true},
		"sandbox: {network: [registry.npmjs.org, '*.pypi.org']}": {Network: []string{"registry.npmjs.org", "*.pypi.org"}},
	}
	for doc, want := range cases {
		p, err := ParsePolicy("w.yaml", []byte(doc+"\n"))
		if err != nil || !reflect.DeepEqual(p.Sandbox, want) {
			t.Errorf("%q: %+v %v, want %+v", doc, p.Sandbox, err, want)
		}
	}
	for doc, msg := range map[string]string{
		"sandbox: maybe":                         "must be on, off",
		"sandbox: {network: https://x.org/}":     "must be a list",
		"sandbox: {network: ['https://x.org/']}": "is not a host name",
		"sandbox: {hosts: [a]}":                  "unknown key",
		"sandbox: {network: ['*']}":              "too wide",
		"sandbox: {network: ['*.*']}":            "too wide",
		"sandbox: {network: ['*.com']}":          "too wide",
		"sandbox: {network: ['foo*.com']}":       "too wide",
		"sandbox: {network: ['*.example.*']}":    "too wide",
		"sandbox: {network: ['*..com']}":         "too wide",
		"sandbox: {network: ['a.*.com']}":        "too wide",
	} {
		if _, err := ParsePolicy("w.yaml", []byte(doc+"\n")); err == nil || !strings.Contains(err.Error(), msg) {
			t.Errorf("%q: %v, want %q", doc, err, msg)
		}
	}
}

func TestSandboxNetworkWarnsThatAnAllowedHostTakesUploads(t *testing.T) {
	p, err := ParsePolicy("w.yaml", []byte("sandbox: {network: [registry.npmjs.org, '*.example.com']}\n"))
	if err != nil {
		t.Fatal(err)
	}
	if w := p.Sandbox.NetworkWarning(); !strings.Contains(w, "registry.npmjs.org, *.example.com") || !strings.Contains(w, "uploads") {
		t.Fatalf("%q", w)
	}
	for _, s := range []Sandbox{{}, {Off: true, Network: []string{"x.org"}}} {
		if w := s.NetworkWarning(); w != "" {
			t.Errorf("%+v: %q", s, w)
		}
	}
}
