package cliapp

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/story-automator/story-automator/internal/coded"
)

func TestProjectRootIsAnExistingDirectoryMadeAbsolute(t *testing.T) {
	dir := t.TempDir()
	wd := func() (string, error) { return dir, nil }
	if got, err := ProjectRoot("", wd); err != nil || got != dir {
		t.Fatalf("from the working directory: %q %v", got, err)
	}
	file := filepath.Join(dir, "f")
	if err := os.WriteFile(file, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	for given, code := range map[string]string{file: "project_root_missing", filepath.Join(dir, "none"): "project_root_missing"} {
		var f *coded.Error
		if _, err := ProjectRoot(given, wd); !errors.As(err, &f) || f.Code != code || f.Action == "" {
			t.Errorf("%s: %v, want %s with an action", given, err, code)
		}
	}
	var f *coded.Error
	if _, err := ProjectRoot("", func() (string, error) { return "", errors.New("gone") }); !errors.As(err, &f) || f.Code != "project_root" {
		t.Errorf("no working directory: %v", err)
	}
}

func TestLoggerWritesAtItsLevelToItsFile(t *testing.T) {
	var stderr bytes.Buffer
	log, err := Logger("INFO", "", &stderr)
	if err != nil {
		t.Fatal(err)
	}
	log.Debug().Msg("hidden")
	log.Info().Msg("shown")
	if s := stderr.String(); strings.Contains(s, "hidden") || !strings.Contains(s, "shown") {
		t.Errorf("stderr %q", s)
	}
	file := filepath.Join(t.TempDir(), "log")
	if log, err = Logger("debug", file, &stderr); err != nil {
		t.Fatal(err)
	}
	log.Debug().Msg("to the file")
	if data, _ := os.ReadFile(file); !strings.Contains(string(data), "to the file") {
		t.Errorf("log file %q", data)
	}
	var f *coded.Error
	if _, err := Logger("loud", "", &stderr); !errors.As(err, &f) || f.Exit != 2 {
		t.Errorf("a bad level: %v", err)
	}
	if _, err := Logger("warn", filepath.Join(file, "under-a-file"), &stderr); !errors.As(err, &f) || f.Code != "log_file" {
		t.Errorf("an unopenable file: %v", err)
	}
}
