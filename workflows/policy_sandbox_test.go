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
	} {
		if _, err := ParsePolicy("w.yaml", []byte(doc+"\n")); err == nil || !strings.Contains(err.Error(), msg) {
			t.Errorf("%q: %v, want %q", doc, err, msg)
		}
	}
}
