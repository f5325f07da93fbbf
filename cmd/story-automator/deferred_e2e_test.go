package main

import (
	"encoding/json"
	"fmt"
	"os/exec"
	"strings"
	"sync"
	"testing"

	"github.com/story-automator/story-automator/workflows"
)

// Six processes of the built binary collect at once, their stdout a pipe:
// each prints its JSON, and together they added every finding exactly once.
func TestDeferredProcessesCollectEachFindingOnce(t *testing.T) {
	bin := builtBinary(t)
	root, _ := deferredProject(t)
	const procs = 6
	var wg sync.WaitGroup
	added := make(chan int, procs)
	errs := make(chan error, procs)
	for range procs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			cmd := exec.Command(bin, "--project-root", root, "deferred")
			cmd.Env = cleanEnv()
			out, err := cmd.Output()
			var res struct {
				OK        bool `json:"ok"`
				Collected struct {
					Added []json.RawMessage `json:"added"`
				} `json:"collected"`
				Open []json.RawMessage `json:"open"`
			}
			if err != nil || json.Unmarshal(out, &res) != nil || !res.OK || len(res.Open) != 3 {
				errs <- fmt.Errorf("deferred: %v: %q", err, out)
				return
			}
			added <- len(res.Collected.Added)
		}()
	}
	wg.Wait()
	close(errs)
	close(added)
	for err := range errs {
		t.Fatal(err)
	}
	total := 0
	for n := range added {
		total += n
	}
	l, err := workflows.Open(root)
	if err != nil {
		t.Fatal(err)
	}
	w, err := workflows.ReadDeferredWork(l)
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, e := range w.Items {
		ids = append(ids, e.ID)
	}
	if total != 3 || len(w.Items) != 3 {
		t.Fatalf("the processes added %d, the file holds %d items (%s); want 3 and 3", total, len(w.Items), strings.Join(ids, ", "))
	}
}
