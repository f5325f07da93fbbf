package spend

import (
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"time"

	_ "modernc.org/sqlite" // the database/sql driver "sqlite", pure Go
)

// openCodeDB is the name of OpenCode's database in its state directory.
const openCodeDB = "opencode.db"

// findOpenCodeDB is the database of the child's OpenCode: a Transcript
// the caller named, else opencode.db in its state directory.
func findOpenCodeDB(s Session) (string, error) {
	if s.Transcript != "" {
		return s.Transcript, nil
	}
	if s.StateDir == "" {
		return "", fmt.Errorf("%w: no state directory to look in", ErrNoRecord)
	}
	path := filepath.Join(s.StateDir, openCodeDB)
	if _, err := os.Stat(path); err != nil {
		return "", fmt.Errorf("%w: %v", ErrNoRecord, err)
	}
	return path, nil
}

// ReadOpenCodeDB reads OpenCode's SQLite database (opencode.db): the
// newest session started in dir since the child started, and the sessions
// it started (its subagents' tasks), each assistant message counted once
// with its tokens. OpenCode's "input" leaves out the cached input it
// counts apart; its reasoning is billed as output.
func ReadOpenCodeDB(path, dir string, since time.Time) (Reading, error) {
	// Read-only, and waiting out a writer: the child may still be closing it.
	dsn := "file:" + (&url.URL{Path: path}).EscapedPath() + "?mode=ro&_pragma=busy_timeout(5000)"
	db, err := sql.Open("sqlite", dsn)
	if err != nil {
		return Reading{}, err
	}
	defer db.Close()
	dirs := []string{dir}
	if real, err := filepath.EvalSymlinks(dir); err == nil && real != dir {
		dirs = append(dirs, real)
	}
	var id string
	err = db.QueryRow(`SELECT id FROM session WHERE parent_id IS NULL AND directory IN (?, ?) AND time_created >= ?
		ORDER BY time_created DESC LIMIT 1`, dirs[0], dirs[len(dirs)-1], since.Add(-time.Second).UnixMilli()).Scan(&id)
	if errors.Is(err, sql.ErrNoRows) {
		return Reading{}, fmt.Errorf("%w: no OpenCode session in %s since %s", ErrNoRecord, dir, since.Format(time.RFC3339))
	}
	if err != nil {
		return Reading{}, fmt.Errorf("%s: %w", path, err)
	}
	rows, err := db.Query(`SELECT m.data FROM message m JOIN session s ON s.id = m.session_id
		WHERE s.id = ? OR s.parent_id = ? ORDER BY m.time_created`, id, id)
	if err != nil {
		return Reading{}, fmt.Errorf("%s: %w", path, err)
	}
	defer rows.Close()
	var r Reading
	found := false
	for rows.Next() {
		var data string
		if err := rows.Scan(&data); err != nil {
			return Reading{}, err
		}
		var m struct {
			Role    string `json:"role"`
			ModelID string `json:"modelID"`
			Tokens  *struct {
				Input, Output, Reasoning int64
				Cache                    struct{ Read, Write int64 }
			} `json:"tokens"`
		}
		if json.Unmarshal([]byte(data), &m) != nil || m.Role != "assistant" || m.Tokens == nil {
			continue
		}
		t := m.Tokens
		r.Usage.add(Usage{InputTokens: t.Input, OutputTokens: t.Output + t.Reasoning,
			CacheReadTokens: t.Cache.Read, CacheWriteTokens: t.Cache.Write})
		if m.ModelID != "" {
			r.Model = m.ModelID
		}
		found = true
	}
	if err := rows.Err(); err != nil {
		return Reading{}, err
	}
	if !found || r.Usage.IsZero() {
		return r, ErrNoUsage
	}
	return r, nil
}

// openCodeSession reads the usage of the OpenCode session s names.
func openCodeSession(s Session) (Reading, error) {
	path, err := findOpenCodeDB(s)
	if err != nil {
		return Reading{}, err
	}
	if strings.TrimSpace(s.Dir) == "" {
		return Reading{}, fmt.Errorf("%w: no folder to find the session by", ErrNoRecord)
	}
	return ReadOpenCodeDB(path, s.Dir, s.Since)
}
