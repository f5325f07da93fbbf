package remotesession

import (
	"fmt"

	"github.com/story-automator/story-automator/internal/textline"
)

func errUnknownHost(name string) error {
	return fmt.Errorf("host %q is not an ssh host of the project's policy", name)
}

func errNoText(host string, answer []byte) error {
	return fmt.Errorf("host %s answered without a screen: %s", host, textline.Cut(textline.OneLine(string(answer)), 200))
}

func errRefused(host, message string) error {
	return fmt.Errorf("on host %s: %s", host, message)
}
