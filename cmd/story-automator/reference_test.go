package main

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/urfave/cli/v2"
)

var updateReference = flag.Bool("update", false, "rewrite docs/commands.md from the command tree")

const commandsDoc = "../../docs/commands.md"

// docs/commands.md is the command tree rendered: every command, its usage
// line and its flags. It cannot drift: this test fails when the file differs
// from the tree, and `make docs` (-update) rewrites it.
func TestCommandReference(t *testing.T) {
	app := newApp(testStreams(t.TempDir(), &bytes.Buffer{}))
	want := renderCommandReference(app)
	if *updateReference {
		if err := os.WriteFile(commandsDoc, []byte(want), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	got, err := os.ReadFile(commandsDoc)
	if err != nil {
		t.Fatalf("%v (run `make docs` to write it)", err)
	}
	if string(got) != want {
		t.Errorf("%s is not the command tree's reference: run `make docs` and commit it\n%s",
			filepath.Base(commandsDoc), firstDifference(string(got), want))
	}
}

func renderCommandReference(app *cli.App) string {
	var b strings.Builder
	b.WriteString("# Command reference\n\n")
	b.WriteString("Every command of `story-automator`, its usage line and its flags, rendered from the\n" +
		"command tree the binary builds. Do not edit this page: `make docs` rewrites it, and a\n" +
		"test fails when it no longer matches the binary. What the commands print, the files\n" +
		"they use and the exit codes are in [reference.md](reference.md).\n\n")
	b.WriteString("## Global flags\n\n")
	fmt.Fprintf(&b, "`%s [global flags] COMMAND [flags] [arguments]`. Global flags may also come after the command.\n\n", app.Name)
	writeFlagTable(&b, append(append([]cli.Flag{}, app.Flags...), cli.VersionFlag, cli.HelpFlag))
	b.WriteString("## Commands\n\n")
	for _, c := range app.Commands {
		writeCommandIndex(&b, c, app.Name, 0)
	}
	b.WriteString("\n")
	for _, c := range app.Commands {
		writeCommand(&b, c, app.Name)
	}
	return strings.TrimRight(b.String(), "\n") + "\n"
}

func writeCommandIndex(b *strings.Builder, c *cli.Command, parent string, depth int) {
	full := parent + " " + c.Name
	fmt.Fprintf(b, "%s- [`%s`](#%s) — %s\n", strings.Repeat("  ", depth), strings.TrimPrefix(full, "story-automator "),
		headingAnchor(full), c.Usage)
	for _, sc := range c.Subcommands {
		writeCommandIndex(b, sc, full, depth+1)
	}
}

func writeCommand(b *strings.Builder, c *cli.Command, parent string) {
	full := parent + " " + c.Name
	fmt.Fprintf(b, "### %s\n\n", full)
	if c.Hidden {
		b.WriteString("Internal: not listed by `--help`.\n\n")
	}
	if c.Usage != "" {
		fmt.Fprintf(b, "%s.\n\n", strings.TrimSuffix(upperFirst(c.Usage), "."))
	}
	fmt.Fprintf(b, "```\n%s\n```\n\n", usageLine(c, full))
	if len(c.Aliases) > 0 {
		fmt.Fprintf(b, "Aliases: %s.\n\n", "`"+strings.Join(c.Aliases, "`, `")+"`")
	}
	if d := strings.TrimSpace(c.Description); d != "" {
		fmt.Fprintf(b, "```text\n%s\n```\n\n", d)
	}
	if len(c.Subcommands) > 0 {
		names := make([]string, len(c.Subcommands))
		for i, sc := range c.Subcommands {
			names[i] = fmt.Sprintf("[`%s`](#%s)", sc.Name, headingAnchor(full+" "+sc.Name))
		}
		fmt.Fprintf(b, "Subcommands: %s.\n\n", strings.Join(names, ", "))
	}
	if len(c.Flags) > 0 {
		writeFlagTable(b, c.Flags)
	}
	for _, sc := range c.Subcommands {
		writeCommand(b, sc, full)
	}
}

func usageLine(c *cli.Command, full string) string {
	line := full
	if len(c.Subcommands) > 0 {
		line += " COMMAND"
	}
	if len(c.Flags) > 0 {
		line += " [flags]"
	}
	if c.ArgsUsage != "" {
		line += " " + c.ArgsUsage
	}
	return line
}

func writeFlagTable(b *strings.Builder, flags []cli.Flag) {
	b.WriteString("| flag | default | environment | what it does |\n| --- | --- | --- | --- |\n")
	for _, f := range flags {
		names := f.Names()
		spelled := make([]string, len(names))
		for i, n := range names {
			spelled[i] = "`" + dashes(n) + "`"
		}
		var def, usage string
		var env []string
		if d, ok := f.(cli.DocGenerationFlag); ok {
			def, usage, env = flagDefault(d), d.GetUsage(), d.GetEnvVars()
			if d.TakesValue() {
				spelled[0] = "`" + dashes(names[0]) + " " + flagValueName(f) + "`"
			}
		}
		if r, ok := f.(cli.RequiredFlag); ok && r.IsRequired() {
			usage += " (required)"
		}
		if s, ok := f.(cli.DocGenerationSliceFlag); ok && s.IsSliceFlag() && !strings.Contains(usage, "repeatable") {
			usage += " (repeatable)"
		}
		fmt.Fprintf(b, "| %s | %s | %s | %s |\n", strings.Join(spelled, ", "), cell(def), cell(codeList(env)), cell(usage))
	}
	b.WriteString("\n")
}

// flagDefault is the default a user sees: the flag's DefaultText, else its
// value; a boolean that is off and an empty value show nothing.
func flagDefault(f cli.DocGenerationFlag) string {
	if t := defaultText(f); t != "" {
		return t
	}
	if !f.TakesValue() {
		if b, ok := f.(*cli.BoolFlag); ok && b.Value {
			return "`true`"
		}
		return ""
	}
	if v := f.GetValue(); v != "" && v != "0" && v != "0s" && v != `""` {
		return "`" + v + "`"
	}
	return ""
}

func defaultText(f cli.Flag) string {
	v := reflect.Indirect(reflect.ValueOf(f))
	if v.Kind() != reflect.Struct {
		return ""
	}
	if t := v.FieldByName("DefaultText"); t.IsValid() && t.Kind() == reflect.String {
		return t.String()
	}
	return ""
}

func flagValueName(f cli.Flag) string {
	switch f.(type) {
	case *cli.DurationFlag:
		return "DURATION"
	case *cli.IntFlag, *cli.Int64Flag, *cli.UintFlag, *cli.Uint64Flag:
		return "N"
	case *cli.Float64Flag:
		return "NUMBER"
	}
	return "VALUE"
}

func dashes(name string) string {
	if len(name) == 1 {
		return "-" + name
	}
	return "--" + name
}

func codeList(items []string) string {
	if len(items) == 0 {
		return ""
	}
	return "`" + strings.Join(items, "`, `") + "`"
}

func cell(s string) string {
	return strings.NewReplacer("|", `\|`, "\n", " ").Replace(s)
}

func upperFirst(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}

func firstDifference(got, want string) string {
	g, w := strings.Split(got, "\n"), strings.Split(want, "\n")
	for i := 0; i < len(g) || i < len(w); i++ {
		var gl, wl string
		if i < len(g) {
			gl = g[i]
		}
		if i < len(w) {
			wl = w[i]
		}
		if gl != wl {
			return fmt.Sprintf("line %d:\n  on disk:   %q\n  from tree: %q", i+1, gl, wl)
		}
	}
	return ""
}
