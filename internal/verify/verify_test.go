package verify

import (
	"context"
	"errors"
	"testing"
)

func TestContractVerifierNeverPasses(t *testing.T) {
	v := Contract("workflow:dev", errors.New("no such story"))
	r := v.Verify(context.Background())
	if r.Passed() || r.ContractErr == nil || r.Detail != "no such story" || v.Name() != "workflow:dev" || !IsContract(v) {
		t.Fatalf("%+v", r)
	}
}

func TestPassedNeedsAValidVerifier(t *testing.T) {
	if (Verdict{Verified: true, ContractErr: errors.New("x")}).Passed() {
		t.Fatal("a verdict with a contract error passed")
	}
	if !(Verdict{Verified: true}).Passed() {
		t.Fatal("a plain verified verdict did not pass")
	}
}
