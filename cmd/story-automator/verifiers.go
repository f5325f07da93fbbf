package main

import "github.com/story-automator/story-automator/monitor"

// workflowVerifier builds the verifier for `monitor-session --workflow STEP
// --story-key K`. The workflows wiring sets it from its own file's init, so
// monitor-session does not depend on how story verifiers are built.
var workflowVerifier func(e *runtimeEnv, step, storyKey string) (monitor.Verifier, error)
