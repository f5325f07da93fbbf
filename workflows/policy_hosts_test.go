package workflows

import (
	"errors"
	"slices"
	"strings"
	"testing"
)

func TestPolicyHasLocalHostByDefault(t *testing.T) {
	p := DefaultPolicy()
	if !slices.Equal(p.HostNames(), []string{LocalHost}) {
		t.Fatalf("hosts = %v", p.HostNames())
	}
	h, ok := p.Host(LocalHost)
	if !ok || !h.Enabled || !h.Local() || h.Parallel != 0 || h.SSH != "" {
		t.Fatalf("local = %+v, %v", h, ok)
	}
}

func TestPolicyReadsHosts(t *testing.T) {
	p, err := ParsePolicy("workflow.yaml", []byte(`
hosts:
  - name: big
    ssh: me@big.example.com
    dir: /srv/sa/
    parallel: 3
    agents: [claude, codex]
  - name: vm
    ssh: vm-alias
    sshCommand: ssh -F /etc/sa/ssh_config
    dir: /home/me/work
    agents: sim
  - name: local
    parallel: 2
    enabled: false
`))
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(p.HostNames(), []string{"local", "big", "vm"}) {
		t.Fatalf("hosts = %v", p.HostNames())
	}
	big, _ := p.Host("big")
	if big.SSH != "me@big.example.com" || big.Dir != "/srv/sa" || big.Parallel != 3 || !slices.Equal(big.Agents, []string{"claude", "codex"}) || !big.Enabled {
		t.Errorf("big = %+v", big)
	}
	vm, _ := p.Host("vm")
	if vm.SSHCommand != "ssh -F /etc/sa/ssh_config" || vm.Parallel != 1 || !slices.Equal(vm.Agents, []string{"sim"}) {
		t.Errorf("vm = %+v", vm)
	}
	local, _ := p.Host("local")
	if local.Enabled || local.Parallel != 2 {
		t.Errorf("local = %+v", local)
	}
}

func TestPolicyRefusesBadHosts(t *testing.T) {
	cases := map[string]struct{ doc, want string }{
		"duplicate": {"hosts:\n  - {name: a, ssh: a, dir: /w}\n  - {name: a, ssh: b, dir: /w}\n", `hosts[1].name: host "a" is named twice (line 3)`},
		"local ssh": {"hosts:\n  - {name: local, ssh: me@x}\n", `hosts[0].ssh: "local" is reserved for this machine`},
		"local dir": {"hosts:\n  - {name: local, dir: /w}\n", `hosts[0].dir: "local" is reserved`},
		"no ssh":    {"hosts:\n  - {name: a, dir: /w}\n", `hosts[0].ssh: host "a" needs ssh`},
		"empty ssh": {"hosts:\n  - {name: a, ssh: '  ', dir: /w}\n", `hosts[0].ssh: host "a" needs ssh`},
		"option":    {"hosts:\n  - {name: a, ssh: -oProxyCommand=x, dir: /w}\n", `is not an ssh destination`},
		"relative":  {"hosts:\n  - {name: a, ssh: a, dir: work}\n", `hosts[0].dir: "work" must be an absolute path on the host`},
		"tilde":     {"hosts:\n  - {name: a, ssh: a, dir: ~/work}\n", `~ is not expanded`},
		"root":      {"hosts:\n  - {name: a, ssh: a, dir: /}\n", `"/" cannot be a work directory`},
		"no dir":    {"hosts:\n  - {name: a, ssh: a}\n", `hosts[0].dir: host "a" needs dir`},
		"no name":   {"hosts:\n  - {ssh: a, dir: /w}\n", `hosts[0].name: every host needs a name`},
		"bad name":  {"hosts:\n  - {name: Big Box, ssh: a, dir: /w}\n", `must be a lower-case name`},
		"parallel":  {"hosts:\n  - {name: a, ssh: a, dir: /w, parallel: 0}\n", `hosts[0].parallel: must be between 1 and 64, got 0`},
		"agents":    {"hosts:\n  - {name: a, ssh: a, dir: /w, agents: [Claude]}\n", `hosts[0].agents: agent "Claude" must be a lower-case name`},
		"no agent":  {"hosts:\n  - {name: a, ssh: a, dir: /w, agents: [sim, gpt]}\n", `hosts[0].agents: no agent "gpt" (agents: `},
		"command":   {"hosts:\n  - {name: a, ssh: a, dir: /w, sshCommand: 'ssh | tee'}\n", `hosts[0].sshCommand: "ssh | tee" must be a command of plain words`},
		"unknown":   {"hosts:\n  - {name: a, ssh: a, dir: /w, port: 22}\n", `hosts[0].port: unknown key (keys: name, ssh, sshCommand, dir, parallel, agents, enabled)`},
		"mapping":   {"hosts: {a: b}\n", `hosts: must be a list of hosts`},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			_, err := ParsePolicy("workflow.yaml", []byte(c.doc))
			if !errors.Is(err, ErrPolicy) || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("err = %v, want %q", err, c.want)
			}
		})
	}
}
