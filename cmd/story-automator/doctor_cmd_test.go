package main

import (
	"bytes"
	"strings"
	"testing"
)

func TestDoctorHelpSaysItChecksEachAgentsSandbox(t *testing.T) {
	var out bytes.Buffer
	if code := Run([]string{"doctor", "--help"}, testStreams(t.TempDir(), &out)); code != 0 || !strings.Contains(out.String(), "each agent's sandbox") {
		t.Fatalf("%d %q", code, out.String())
	}
}

func TestDoctorHelpSaysItChecksSubagents(t *testing.T) {
	var out bytes.Buffer
	if code := Run([]string{"doctor", "--help"}, testStreams(t.TempDir(), &out)); code != 0 || !strings.Contains(out.String(), "blocking subagents") {
		t.Fatalf("%d %q", code, out.String())
	}
}
