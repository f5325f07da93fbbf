package workflows

import (
	"reflect"
	"strings"
	"testing"
)

func TestPolicyReadsEnvPass(t *testing.T) {
	for doc, want := range map[string][]string{
		"":                              nil,
		"env: {pass: [A, _B1, A]}":      {"A", "_B1"},
		"env: {pass: null}":             nil,
		"env:":                          nil,
		"env: {pass: [GOOGLE_CLOUD_X]}": {"GOOGLE_CLOUD_X"},
	} {
		p, err := ParsePolicy("w.yaml", []byte(doc+"\n"))
		if err != nil || !reflect.DeepEqual(p.Env.Pass, want) {
			t.Errorf("%q: %v %v, want %v", doc, p.Env.Pass, err, want)
		}
	}
	for doc, msg := range map[string]string{
		"env: {pass: A}":       "must be a list",
		"env: {pass: ['1A']}":  "is not an environment variable name",
		"env: {pass: ['A=B']}": "is not an environment variable name",
		"env: {pass: [[A]]}":   "is not an environment variable name",
		"env: {keep: [A]}":     "unknown key (keys: pass)",
		"env: [A]":             "must be a mapping",
		"env: {pass: [TOPIC, B]}\nnotify: {webhook: 'https://ntfy.sh/$TOPIC'}":                              "env.pass: TOPIC is named by notify",
		"env: {pass: [TOK]}\nnotify: {webhook: 'https://x.org', headers: {Authorization: 'Bearer ${TOK}'}}": "env.pass: TOK is named by notify",
	} {
		if _, err := ParsePolicy("w.yaml", []byte(doc+"\n")); err == nil || !strings.Contains(err.Error(), msg) {
			t.Errorf("%q: %v, want %q", doc, err, msg)
		}
	}
}

func TestNotifyVarsAreTheWebhooksVariables(t *testing.T) {
	doc := "notify:\n  command: 'echo $HOME'\n  webhook:\n    - url: 'https://ntfy.sh/$TOPIC'\n      headers: {Authorization: 'Bearer ${NTFY_TOKEN}', X: plain}\n    - url: '$SLACK_URL'\n"
	p, err := ParsePolicy("w.yaml", []byte(doc))
	if err != nil {
		t.Fatal(err)
	}
	if got := p.Notify.Vars(); !reflect.DeepEqual(got, []string{"NTFY_TOKEN", "SLACK_URL", "TOPIC"}) {
		t.Fatalf("%v", got)
	}
}
