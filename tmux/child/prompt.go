package child

import (
	"io"
	"os"

	"github.com/story-automator/story-automator/internal/coded"
)

// PromptFrom is a spawn's prompt: text, or the whole of file when one is
// named ("-": in). A file that cannot be read is a usage error.
func PromptFrom(text, file string, in io.Reader) (string, error) {
	if file == "" {
		return text, nil
	}
	var data []byte
	var err error
	if file == "-" {
		data, err = io.ReadAll(in)
	} else {
		data, err = os.ReadFile(file)
	}
	if err != nil {
		return "", coded.Usage("cannot read --prompt-file: %v", err)
	}
	return string(data), nil
}
