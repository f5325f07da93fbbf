package doctor

import (
	"fmt"
	"strings"

	"github.com/story-automator/story-automator/modelsim"
)

// simServer is the model-sim an offline rehearsal's agent talks to, served
// from this process.
type simServer struct {
	srv *modelsim.Server
	url string
}

// startModelSim serves a model-sim with script whose steps run exe.
func startModelSim(exe, script string) (*simServer, error) {
	s, err := modelsim.ParseScript([]byte(script))
	if err != nil {
		return nil, fmt.Errorf("the rehearsal's model-sim script: %w", err)
	}
	srv, err := modelsim.Start(modelsim.Options{Script: s, Exe: exe})
	if err != nil {
		return nil, fmt.Errorf("start model-sim: %w", err)
	}
	return &simServer{srv: srv, url: srv.URL()}, nil
}

// Close stops model-sim.
func (s *simServer) Close() { _ = s.srv.Close() }

// received reports whether model-sim answered a main (not side) request
// whose body holds text.
func (s *simServer) received(text string) bool {
	for _, e := range s.srv.Exchanges() {
		if !e.Side && strings.Contains(string(e.Request), text) {
			return true
		}
	}
	return false
}
