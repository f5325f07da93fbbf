package doctor

import (
	"context"
	"fmt"
	"runtime"
	"strings"

	"github.com/story-automator/story-automator/agent"
	"github.com/story-automator/story-automator/tmux/child"
	"github.com/story-automator/story-automator/workflows"
)

// checkSandbox says whether the agent's own sandbox works here (a real
// probe, child.CheckSandbox) and what it lets a confined child do; with
// workflow.yaml's `sandbox: off` the children run unconfined, a warning.
func checkSandbox(ctx context.Context, agentName string, o Options) Check {
	c := Check{Name: "sandbox", Agent: agentName}
	p, _ := agent.LookupProfile(agentName)
	if p.Sandbox.Kind == "" {
		c.Status, c.Detail = OK, "not confined: "+p.Sandbox.Unconfined
		if !p.Sandbox.OwnCode {
			// Whatever it runs can write anywhere you can.
			c.Status = Warn
			c.Fix = "run it only on a machine (or in a container) that is itself the sandbox"
		}
		return c
	}
	if err := child.CheckSandbox(ctx, agentName, o.Environ); err != nil {
		c.Status, c.Detail = Fail, err.Error()
		if ae, ok := child.AsAgentError(err); ok {
			c.Fix = ae.Action
		}
		return c
	}
	reads := p.Sandbox.Reads(runtime.GOOS)
	pol, perr := workflows.LoadPolicy(o.Root)
	if perr == nil && len(pol.Sandbox.ReadDeny) > 0 && p.Sandbox.HidesCredentials(runtime.GOOS) {
		reads += " and sandbox.readDeny: " + strings.Join(pol.Sandbox.ReadDeny, ", ")
	}
	whose := p.Product + "'s sandbox"
	if p.Sandbox.Kind == agent.SandboxWrapped {
		whose = "this tool's own sandbox around the whole command"
	}
	c.Status, c.Detail = OK, fmt.Sprintf("%s works here (%s); %s; %s", whose, p.Sandbox.Kind, p.Sandbox.Allows, reads)
	if !p.Sandbox.HidesCredentials(runtime.GOOS) {
		c.Status = Warn
		c.Fix = "run it with your credentials out of its HOME, or use an agent that hides them on " + runtime.GOOS
	}
	switch {
	case pol.Sandbox.Off && perr == nil:
		c.Status = Warn
		c.Detail = "workflow.yaml says `sandbox: off`: children run unconfined, though " + c.Detail
		c.Fix = "remove `sandbox: off` from " + workflows.PolicyFile + " to confine them"
	case perr != nil:
	case pol.Sandbox.NetworkWarning() != "" && p.Sandbox.Hosts:
		c.Status = Warn
		c.Detail += "; " + pol.Sandbox.NetworkWarning()
		c.Fix = "keep sandbox.network in " + workflows.PolicyFile + " to the hosts a child must reach"
	}
	return c
}

// sandboxOff reports whether the project's workflow.yaml runs children unconfined.
func sandboxOff(root string) bool {
	pol, err := workflows.LoadPolicy(root)
	return err == nil && pol.Sandbox.Off
}
