package workflows

import (
	"fmt"
	"path/filepath"
	"strings"
)

// sshOptArgs are the ssh options that take an argument (OpenSSH 9's
// getopt string): the rest of the word or the next word.
const sshOptArgs = "bceilmopBDEFIJLOPQRSwW"

// sshOptFlags are the ssh options that take none.
const sshOptFlags = "1246afgknqstvxACGKMNTVXYy"

// unsafeSSHConfig are the ssh_config keywords a committed workflow.yaml may
// not set in sshCommand (lower case): each turns host-key checking off or
// hands it to a file or command of the project, runs a local command or a
// proxy, loads a library, forwards the user's agent or a port of this
// machine to the host, or takes over the connection this tool manages. STRICTHOSTKEYCHECKING is checked by value.
var unsafeSSHConfig = map[string]string{
	"userknownhostsfile":   "names the known-hosts file",
	"globalknownhostsfile": "names the known-hosts file",
	"knownhostscommand":    "runs a command for the known host keys",
	"proxycommand":         "runs a local command as the connection",
	"proxyjump":            "goes through another host",
	"localcommand":         "runs a local command",
	"permitlocalcommand":   "lets ssh run a local command",
	"pkcs11provider":       "loads a library into ssh",
	"securitykeyprovider":  "loads a library into ssh",
	"forwardagent":         "forwards your ssh agent to the host, where agents run",
	"remoteforward":        "opens a port on the host into this machine's network, where agents run",
	"controlpath":          "takes over the connection story-automator keeps",
	"controlmaster":        "takes over the connection story-automator keeps",
	"controlpersist":       "takes over the connection story-automator keeps",
}

// sshFlagProblems are ssh's own flags that do what unsafeSSHConfig refuses.
var sshFlagProblems = map[byte]string{
	'A': "forwards your ssh agent to the host, where agents run",
	'J': "goes through another host (a proxy)",
	'I': "loads a PKCS#11 library into ssh",
	'S': "takes over the connection story-automator keeps",
	'R': "opens a port on the host into this machine's network, where agents run",
}

// SSHCommandProblem says why a workflow.yaml's sshCommand (split into
// words) is refused, "" when it is not, and the -F config files it names.
// The file is the project's, which anyone who can push to it writes: it
// must not weaken how ssh checks the host it connects to nor make ssh run
// anything but ssh. Your own ssh config and STORY_AUTOMATOR_SSH_COMMAND
// are yours and are not checked.
func SSHCommandProblem(words []string) (problem string, configFiles []string) {
	if len(words) == 0 {
		return "it is empty", nil
	}
	prog := words[0]
	if filepath.Base(prog) != "ssh" || (strings.Contains(prog, "/") && !filepath.IsAbs(prog)) {
		return fmt.Sprintf("its program %q is not ssh (a name on PATH or an absolute path)", prog), nil
	}
	for i := 1; i < len(words); i++ {
		w := words[i]
		if len(w) < 2 || w[0] != '-' || w == "--" {
			return fmt.Sprintf("%q is not an option: sshCommand holds ssh and its options, the host's ssh: names the destination", w), nil
		}
		for j := 1; j < len(w); j++ {
			c := w[j]
			switch {
			case sshFlagProblems[c] != "":
				return fmt.Sprintf("-%c %s", c, sshFlagProblems[c]), nil
			case strings.IndexByte(sshOptFlags, c) >= 0:
				continue
			case strings.IndexByte(sshOptArgs, c) < 0:
				return fmt.Sprintf("-%c is not an ssh option", c), nil
			}
			arg := w[j+1:]
			if arg == "" {
				if i+1 >= len(words) {
					return fmt.Sprintf("-%c needs a value", c), nil
				}
				i++
				arg = words[i]
			}
			if p := sshOptionProblem(c, arg); p != "" {
				return p, nil
			}
			if c == 'F' {
				configFiles = append(configFiles, arg)
			}
			break
		}
	}
	return "", configFiles
}

// sshOptionProblem checks one option's value: -o KEY=VALUE (or "KEY
// VALUE") and -F FILE.
func sshOptionProblem(c byte, arg string) string {
	switch c {
	case 'F':
		if !filepath.IsAbs(arg) && !strings.HasPrefix(arg, "~/") {
			return fmt.Sprintf("-F %s: the config file must be an absolute path (or ~/…) outside the project", arg)
		}
	case 'o':
		key, val, _ := strings.Cut(strings.TrimSpace(arg), "=")
		if k, v, ok := strings.Cut(key, " "); ok && val == "" {
			key, val = k, v
		}
		key, val = strings.ToLower(strings.TrimSpace(key)), strings.ToLower(strings.Trim(strings.TrimSpace(val), `"`))
		if why := unsafeSSHConfig[key]; why != "" {
			if key == "forwardagent" && val == "no" {
				return ""
			}
			return fmt.Sprintf("-o %s %s", arg, why)
		}
		if key == "stricthostkeychecking" && val != "yes" && val != "ask" && val != "true" {
			return fmt.Sprintf("-o %s turns host-key checking off or trusts a new host's key unseen (only yes or ask)", arg)
		}
	}
	return ""
}

// checkSSHConfigFiles refuses a host whose sshCommand reads its ssh config
// from inside the project (root): the project's file would then decide how
// ssh checks the host, or run a command.
func (p *Policy) checkSSHConfigFiles(root, home string) error {
	if abs, err := filepath.Abs(root); err == nil {
		root = abs
	}
	for _, h := range p.Hosts {
		_, files := SSHCommandProblem(splitOrNil(h.SSHCommand))
		for _, f := range files {
			if rest, ok := strings.CutPrefix(f, "~/"); ok {
				f = filepath.Join(home, rest)
			}
			if rel, err := filepath.Rel(root, filepath.Clean(f)); err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
				return fmt.Errorf("%w: %s: hosts: %s: sshCommand -F %s is inside the project: the project's file would decide how ssh checks the host; keep the ssh config in your own folder (~/.ssh/config)",
					ErrPolicy, PolicyFile, h.Name, f)
			}
		}
	}
	return nil
}
