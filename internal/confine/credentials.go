package confine

import "path/filepath"

// credentials are the user's secrets under the home folder, each with why
// a command of the project's or an agent's tools has no business reading it.
var credentials = []struct{ path, why string }{
	{".ssh", "private keys and the hosts they open"},
	{".aws", "AWS access keys (credentials, config with SSO tokens)"},
	{".config/gcloud", "Google Cloud tokens and service-account keys"},
	{".azure", "Azure CLI tokens"},
	{".kube", "Kubernetes cluster certificates and tokens"},
	{".docker/config.json", "registry passwords and tokens (the rest of ~/.docker holds none)"},
	{".netrc", "passwords curl, git and ftp send to hosts"},
	{".npmrc", "the npm registry token"},
	{".yarnrc.yml", "the yarn registry token"},
	{".pypirc", "the PyPI upload password or token"},
	{".gem/credentials", "the RubyGems API key"},
	{".cargo/credentials.toml", "the crates.io token"},
	{".cargo/credentials", "the crates.io token (older name)"},
	{".git-credentials", "git's stored passwords and tokens in plain text"},
	{".config/git/credentials", "the same, in git's XDG place"},
	{".config/gh", "the GitHub CLI's token"},
	{".config/hub", "the hub CLI's GitHub token"},
	{".config/glab-cli", "the GitLab CLI's token"},
	{".terraform.d/credentials.tfrc.json", "Terraform Cloud tokens"},
	{".vault-token", "a HashiCorp Vault token"},
	{".local/share/keyrings", "the GNOME keyring: every password it stores"},
	{".local/share/kwalletd", "the KDE wallet: every password it stores"},
	{".gnupg", "GPG private keys (signing, password-store decryption)"},
	{".password-store", "pass's encrypted passwords (with ~/.gnupg, readable ones)"},
	{".config/op", "the 1Password CLI's session"},
	{"Library/Keychains", "the macOS keychains: every password they store"},
}

// CredentialPaths: the user's credentials every child and every confined
// command is denied, under home (each path's reason is beside it in the
// table above). Paths that do not exist are listed too: Wrap leaves out
// what is absent when it runs.
func CredentialPaths(home string) []string {
	out := make([]string, 0, len(credentials))
	for _, c := range credentials {
		out = append(out, filepath.Join(home, filepath.FromSlash(c.path)))
	}
	return out
}
