package confine

import (
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/story-automator/story-automator/internal/coded"
)

// The mounts come in the order that makes the policy hold: everything
// read-only, then /tmp, then the writable folders, then the hidden paths
// (a hidden file inside a writable folder stays hidden); no network
// namespace of its own only when the policy allows the network.
func TestBwrapArgsOrderTheMountsSoThePolicyHolds(t *testing.T) {
	dir, tmp := t.TempDir(), t.TempDir()
	secretDir := filepath.Join(dir, "secrets")
	secretFile := filepath.Join(dir, "key")
	if err := os.Mkdir(secretDir, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(secretFile, []byte("k"), 0o600); err != nil {
		t.Fatal(err)
	}
	hooks := filepath.Join(dir, ".git", "hooks")
	p := Policy{Writable: []string{dir}, ReadDeny: []string{secretDir, secretFile}, TmpDir: tmp, ReadOnly: []string{hooks}}
	got := strings.Join(bwrapArgs(p, []string{"sh", "-c", "x"}), " ")
	want := []string{"--cap-drop ALL", "--ro-bind / /", "--unshare-net", "--bind " + tmp + " /tmp", "--setenv TMPDIR /tmp",
		"--bind " + dir + " " + dir, "--ro-bind " + hooks + " " + hooks, "--tmpfs " + secretDir + " --remount-ro " + secretDir,
		"--dev-bind /dev/null " + secretFile, "-- sh -c x"}
	at := -1
	for _, w := range want {
		i := strings.Index(got, w)
		if i <= at {
			t.Fatalf("%q missing or out of order in\n%s", w, got)
		}
		at = i
	}
	p.Network = true
	if got := bwrapArgs(p, []string{"true"}); slices.Contains(got, "--unshare-net") {
		t.Fatalf("network allowed, yet a network namespace of its own: %v", got)
	}
	p.TmpDir = ""
	if got := strings.Join(bwrapArgs(p, []string{"true"}), " "); !strings.Contains(got, "--tmpfs /tmp") {
		t.Fatalf("no temp folder given, /tmp must still be private: %s", got)
	}
}

// The macOS profile: writes denied but under the writable folders and the
// temp folder, the hidden paths denied last (a folder as a subpath, a file
// as a literal), no network unless allowed; paths quoted.
func TestSeatbeltProfileText(t *testing.T) {
	dir := t.TempDir()
	secretFile := filepath.Join(dir, "key")
	if err := os.WriteFile(secretFile, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	p := Policy{Writable: []string{"/work/pro\"j"}, ReadDeny: []string{dir, secretFile}, TmpDir: "/private/tmp/t",
		ReadOnly: []string{"/work/pro\"j/.git/hooks"}}
	got := seatbeltProfile(p)
	want := "(version 1)\n(allow default)\n(deny file-write*)\n(allow file-write*\n" +
		"  (subpath \"/work/pro\\\"j\")\n  (subpath \"/private/tmp/t\")\n" +
		"  (literal \"/dev/null\") (literal \"/dev/zero\") (literal \"/dev/tty\")\n" +
		"  (regex #\"^/dev/fd/\") (regex #\"^/dev/ttys[0-9]+$\"))\n" +
		"(deny file-write*\n  (subpath \"/work/pro\\\"j/.git/hooks\")\n)\n" +
		"(deny file-read* file-write*\n  (subpath \"" + dir + "\")\n  (literal \"" + secretFile + "\")\n)\n" +
		"(deny network*)\n"
	if got != want {
		t.Fatalf("profile:\n%s\nwant:\n%s", got, want)
	}
	p.Network = true
	if strings.Contains(seatbeltProfile(p), "network") {
		t.Fatalf("network allowed, yet denied:\n%s", seatbeltProfile(p))
	}
	args := seatbeltArgs(p, []string{"sh", "-c", "x"})
	if args[0] != "-p" || !slices.Equal(args[2:], []string{"/usr/bin/env", "TMPDIR=/private/tmp/t", "sh", "-c", "x"}) {
		t.Fatalf("argv: %q", args)
	}
}

func TestCredentialPathsCoverTheUsersSecrets(t *testing.T) {
	got := CredentialPaths("/home/u")
	for _, want := range []string{".ssh", ".aws", ".config/gcloud", ".azure", ".kube", ".docker/config.json",
		".netrc", ".npmrc", ".pypirc", ".git-credentials", ".config/gh", ".local/share/keyrings", ".gnupg",
		".password-store"} {
		if !slices.Contains(got, "/home/u/"+want) {
			t.Errorf("%s is not denied: %v", want, got)
		}
	}
	for _, c := range credentials {
		if c.why == "" {
			t.Errorf("%s: no reason given", c.path)
		}
	}
}

func TestWrapRefusesRelativeAndMissingPaths(t *testing.T) {
	for name, p := range map[string]Policy{
		"relative writable": {Writable: []string{"proj"}},
		"missing writable":  {Writable: []string{filepath.Join(t.TempDir(), "gone")}},
		"relative hidden":   {ReadDeny: []string{".ssh"}},
		"relative readonly": {ReadOnly: []string{".git/hooks"}},
		"missing tmp":       {TmpDir: filepath.Join(t.TempDir(), "gone")},
	} {
		if _, err := Wrap(p, []string{"true"}); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
	if _, err := Wrap(Policy{}, nil); err == nil {
		t.Error("no command: accepted")
	}
}

// Without the sandbox program the command is refused with the install line.
func TestWrapWithoutTheSandboxProgramIsRefusedWithTheInstallLine(t *testing.T) {
	t.Setenv("PATH", t.TempDir())
	_, err := Wrap(Policy{}, []string{"true"})
	var ce *coded.Error
	if !errors.As(err, &ce) || ce.Code != CodeSandboxUnavailable {
		t.Fatalf("want %s, got %v", CodeSandboxUnavailable, err)
	}
	if runtime.GOOS == "linux" && !strings.Contains(ce.Action, Install) {
		t.Fatalf("no install line: %q", ce.Action)
	}
}

// A narrowed network on macOS: all network denied but the proxy's
// loopback port and a model endpoint's there.
func TestSeatbeltProfileAllowsOnlyTheProxyPorts(t *testing.T) {
	got := seatbeltProfile(Policy{proxyPorts: []int{41000, 8080}})
	deny := strings.Index(got, "(deny network*)")
	for _, port := range []string{"41000", "8080"} {
		allow := strings.Index(got, `(allow network-outbound (remote ip "localhost:`+port+`"))`)
		if deny < 0 || allow < deny {
			t.Fatalf("port %s not allowed after the network is denied:\n%s", port, got)
		}
	}
	if strings.Count(got, "(allow network") != 2 {
		t.Fatalf("more allowed than the two ports:\n%s", got)
	}
}

// Wrap with a narrowed network hands the policy to this program's
// NetCommand, which starts the sandbox; a policy it cannot hold is refused.
func TestNetArgvHandsThePolicyToTheProxyCommand(t *testing.T) {
	tmp := t.TempDir()
	p := Policy{TmpDir: tmp, Net: &Net{Exe: "/opt/sa/story-automator", Allow: []string{"*.pypi.org", "127.0.0.1:4000"}}}
	argv, err := netArgv(p, []string{"agent", "--x"})
	if err != nil {
		t.Fatal(err)
	}
	if argv[0] != p.Net.Exe || argv[1] != NetCommand || argv[3] != "--" || strings.Join(argv[4:], " ") != "agent --x" {
		t.Fatalf("argv: %q", argv)
	}
	if !strings.Contains(argv[2], `"allow":["*.pypi.org","127.0.0.1:4000"]`) || !strings.Contains(argv[2], tmp) {
		t.Fatalf("policy: %s", argv[2])
	}
	for name, bad := range map[string]Policy{
		"relative program": {TmpDir: tmp, Net: &Net{Exe: "story-automator"}},
		"bad host":         {TmpDir: tmp, Net: &Net{Exe: "/x", Allow: []string{"foo*.com"}}},
		"no temp folder":   {Net: &Net{Exe: "/x"}},
		"network kept":     {TmpDir: tmp, Network: true, Net: &Net{Exe: "/x"}},
	} {
		if _, err := netArgv(bad, []string{"true"}); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
}

// A private copy is mounted over its folder after the writable folders
// (it may lie in one) and before the read-only and hidden paths.
func TestBwrapArgsMountAPrivateCopyOverItsFolder(t *testing.T) {
	home, cp := t.TempDir(), t.TempDir()
	cfg := filepath.Join(home, ".config", "x")
	key := filepath.Join(home, "key")
	if err := os.MkdirAll(cfg, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(key, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	r, err := resolve(Policy{Writable: []string{home}, Over: []Mount{{Src: cp, Dst: cfg}}, ReadDeny: []string{key}})
	if err != nil {
		t.Fatal(err)
	}
	got := strings.Join(bwrapArgs(r, []string{"true"}), " ")
	w, o, d := strings.Index(got, "--bind "+home+" "+home), strings.Index(got, "--bind "+cp+" "+cfg), strings.Index(got, "--dev-bind /dev/null "+key)
	if w < 0 || o < w || d < o {
		t.Fatalf("mounts out of order:\n%s", got)
	}
	if _, err := resolve(Policy{Over: []Mount{{Src: cp, Dst: filepath.Join(home, "absent")}}}); err == nil {
		t.Fatal("a private copy over a folder that does not exist was accepted")
	}
}
