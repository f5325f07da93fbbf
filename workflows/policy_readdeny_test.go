package workflows

import (
	"reflect"
	"strings"
	"testing"
)

func TestPolicyReadsTheSandboxReadDeny(t *testing.T) {
	p, err := ParsePolicy("w.yaml", []byte("sandbox: {readDeny: [~/.config/rclone, /srv/secrets/db.key]}\n"))
	if err != nil || !reflect.DeepEqual(p.Sandbox.ReadDeny, []string{"~/.config/rclone", "/srv/secrets/db.key"}) {
		t.Fatalf("%+v %v", p.Sandbox, err)
	}
	for doc, msg := range map[string]string{
		"sandbox: {readDeny: ~/.x}":           "must be a list of paths",
		"sandbox: {readDeny: [.env]}":         `".env" is neither absolute nor under ~/`,
		"sandbox: {readDeny: ['~']}":          `"~" is neither absolute nor under ~/`,
		"sandbox: {readDeny: [~user/.x]}":     "is neither absolute nor under ~/",
		"sandbox: {readDeny: ['~/']}":         "would hide the whole home folder",
		"sandbox: {readDeny: ['/']}":          "would hide the whole home folder or filesystem",
		"sandbox: {readDeny: ['~/.x/*.pem']}": "write a path, not a pattern",
		"sandbox: {readDeny: [{a: b}]}":       "sandbox.readDeny",
	} {
		_, err := ParsePolicy("w.yaml", []byte(doc+"\n"))
		if err == nil || !strings.Contains(err.Error(), msg) || !strings.Contains(err.Error(), "sandbox.readDeny") {
			t.Errorf("%q: %v, want %q at sandbox.readDeny", doc, err, msg)
		}
	}
}
