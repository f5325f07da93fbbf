package limit

import (
	"database/sql"
	"encoding/json"
	"net/url"
	"path/filepath"
	"strconv"
	"time"

	_ "modernc.org/sqlite" // the database/sql driver "sqlite", pure Go
)

// openCodeReset is the response header of an Anthropic usage limit that
// OpenCode keeps with a failed message: the reset, in epoch seconds.
const openCodeReset = "anthropic-ratelimit-unified-reset"

// FromOpenCodeDB reads the reset of a usage limit from OpenCode's
// database (opencode.db under stateHome): the newest assistant message
// since the child started whose API error is a 429 with the reset header
// (a limit is the account's, so any session of the child's time names
// it); ok is false when there is none to read.
func FromOpenCodeDB(stateHome string, since time.Time) (time.Time, bool) {
	if stateHome == "" {
		return time.Time{}, false
	}
	path := filepath.Join(stateHome, "opencode.db")
	db, err := sql.Open("sqlite", "file:"+(&url.URL{Path: path}).EscapedPath()+"?mode=ro&_pragma=busy_timeout(5000)")
	if err != nil {
		return time.Time{}, false
	}
	defer db.Close()
	rows, err := db.Query(`SELECT data FROM message WHERE time_created >= ? ORDER BY time_created DESC LIMIT 50`,
		since.Add(-time.Second).UnixMilli())
	if err != nil {
		return time.Time{}, false
	}
	defer rows.Close()
	for rows.Next() {
		var data string
		if rows.Scan(&data) != nil {
			return time.Time{}, false
		}
		var m struct {
			Error *struct {
				Data struct {
					StatusCode int               `json:"statusCode"`
					Headers    map[string]string `json:"responseHeaders"`
				} `json:"data"`
			} `json:"error"`
		}
		if json.Unmarshal([]byte(data), &m) != nil || m.Error == nil || m.Error.Data.StatusCode != 429 {
			continue
		}
		if n, err := strconv.ParseInt(m.Error.Data.Headers[openCodeReset], 10, 64); err == nil && n > 0 {
			return time.Unix(n, 0).UTC(), true
		}
	}
	return time.Time{}, false
}
