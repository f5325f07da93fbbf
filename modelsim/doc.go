// Package modelsim is a scripted model endpoint on loopback: one brain that
// decides what the model does, and one small adapter per wire protocol
// (Anthropic Messages, OpenAI Responses, Gemini generateContent) that turns
// requests into a Conversation and the brain's Reply into that protocol's
// stream. The brain acts only through the calling CLI's own tools (a shell
// command, a file write); it never touches files itself. Every response
// reports deterministic usage, and every request is recorded, so tests can
// assert exact figures.
//
// Use it from Go tests like httptest:
//
//	srv, err := modelsim.Start(modelsim.Options{Exe: storyAutomatorBinary})
//	defer srv.Close()
//	// point the CLI at srv.URL() (see package offline), run it, then
//	for _, ex := range srv.Exchanges() { ... ex.Usage ... }
package modelsim
