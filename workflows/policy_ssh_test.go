package workflows

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A committed sshCommand cannot turn host-key checking off, hand it to a
// file or command, run a local or proxy command, load a library, forward
// the agent or take over the connection; plain options pass.
func TestPolicyRefusesAnSSHCommandThatWeakensHostKeyChecking(t *testing.T) {
	host := func(cmd string) string {
		return "hosts:\n  - {name: a, ssh: a, dir: /w, sshCommand: '" + cmd + "'}\n"
	}
	for _, ok := range []string{"ssh -F /home/me/.ssh/big", "/usr/bin/ssh -p 2222 -i /k -v", "ssh -o StrictHostKeyChecking=yes",
		"ssh -oStrictHostKeyChecking=ask -o ForwardAgent=no -F ~/.ssh/c", "ssh -4vp 22"} {
		if _, err := ParsePolicy("w.yaml", []byte(host(ok))); err != nil {
			t.Errorf("%s: %v", ok, err)
		}
	}
	for cmd, want := range map[string]string{
		"ssh -o StrictHostKeyChecking=no -o UserKnownHostsFile=/dev/null": "StrictHostKeyChecking=no turns host-key checking off",
		"ssh -oStrictHostKeyChecking=off":                                 "turns host-key checking off",
		"ssh -o StrictHostKeyChecking=accept-new":                         "trusts a new host's key unseen",
		"ssh -o \"StrictHostKeyChecking no\"":                             "turns host-key checking off",
		"ssh -o UserKnownHostsFile=/dev/null":                             "names the known-hosts file",
		"ssh -o GlobalKnownHostsFile=known":                               "names the known-hosts file",
		"ssh -o KnownHostsCommand=/bin/cat":                               "runs a command for the known host keys",
		"ssh -o ProxyCommand=nc":                                          "runs a local command as the connection",
		"ssh -o proxyjump=b":                                              "goes through another host",
		"ssh -J b":                                                        "-J goes through another host",
		"ssh -vJb":                                                        "-J goes through another host",
		"ssh -o PermitLocalCommand=yes -o LocalCommand=touch":             "lets ssh run a local command",
		"ssh -A":                                 "-A forwards your ssh agent",
		"ssh -o ForwardAgent=yes":                "forwards your ssh agent",
		"ssh -o PKCS11Provider=/x.so":            "loads a library",
		"ssh -I /x.so":                           "loads a PKCS#11 library",
		"ssh -S /tmp/s":                          "takes over the connection",
		"ssh -R 8080:localhost:22":               "-R opens a port on the host",
		"ssh -o RemoteForward=8080:localhost:22": "opens a port on the host",
		"ssh -F ssh_config":                      "must be an absolute path",
		"./ssh":                                  `its program "./ssh" is not ssh`,
		"sh -c ssh":                              `its program "sh" is not ssh`,
		"ssh me@host":                            `"me@host" is not an option`,
		"ssh -Z":                                 "-Z is not an ssh option",
		"ssh -p":                                 "-p needs a value",
	} {
		_, err := ParsePolicy("w.yaml", []byte(host(cmd)))
		if !errors.Is(err, ErrPolicy) || !strings.Contains(err.Error(), "hosts[0].sshCommand") || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v, want %q", cmd, err, want)
		}
	}
}

// An -F file inside the project is the project's own ssh config: refused
// when the project's policy is loaded; one outside it passes.
func TestLoadPolicyRefusesAnSSHConfigFileInsideTheProject(t *testing.T) {
	root := t.TempDir()
	if err := os.MkdirAll(filepath.Join(root, StateDir), 0o755); err != nil {
		t.Fatal(err)
	}
	for file, refused := range map[string]bool{filepath.Join(root, "ops", "ssh_config"): true,
		filepath.Join(root, ".."+string(filepath.Separator)+filepath.Base(root)+"-other", "c"): false} {
		doc := "hosts:\n  - {name: a, ssh: a, dir: /w, sshCommand: 'ssh -F " + file + "'}\n"
		if err := os.WriteFile(filepath.Join(root, PolicyFile), []byte(doc), 0o644); err != nil {
			t.Fatal(err)
		}
		_, err := LoadPolicy(root)
		if got := err != nil && errors.Is(err, ErrPolicy) && strings.Contains(err.Error(), "is inside the project"); got != refused {
			t.Errorf("-F %s: %v, want refused %v", file, err, refused)
		}
	}
}
