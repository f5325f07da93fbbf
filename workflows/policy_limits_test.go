package workflows

import (
	"errors"
	"strings"
	"testing"
	"time"
)

func TestPolicyReadsOnLimitAndMaxWait(t *testing.T) {
	p := DefaultPolicy()
	if p.OnLimit != OnLimitFallback || p.MaxWait != 6*time.Hour {
		t.Fatalf("defaults: onLimit %q maxWait %s", p.OnLimit, p.MaxWait)
	}
	p, err := ParsePolicy("workflow.yaml", []byte("onLimit: wait\nmaxWait: 90m\n"))
	if err != nil || p.OnLimit != OnLimitWait || p.MaxWait != 90*time.Minute {
		t.Fatalf("%+v %v", p, err)
	}
	for _, doc := range []string{"onLimit: retry\n", "maxWait: 0s\n", "maxWait: soon\n", "maxWait: 1ns\n", "maxWait: 59s\n"} {
		if _, err := ParsePolicy("workflow.yaml", []byte(doc)); !errors.Is(err, ErrPolicy) || !strings.Contains(err.Error(), strings.Split(doc, ":")[0]) {
			t.Errorf("%q: %v", doc, err)
		}
	}
}
