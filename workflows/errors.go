package workflows

import "errors"

// Errors with stable codes (see Code). Several may apply to one error: an
// unknown story asked of a verifier is both ErrContract and ErrStoryNotFound.
var (
	// ErrContract marks a request the verifier can never satisfy (an unknown
	// step, story or epic): retrying or re-checking cannot help.
	ErrContract = errors.New("verifier contract invalid")

	ErrLayoutNotFound    = errors.New("no BMAD implementation artifacts directory")
	ErrOutsideProject    = errors.New("path escapes the project root")
	ErrBMADConfig        = errors.New("invalid _bmad/bmm/config.yaml")
	ErrSprintNotFound    = errors.New("no sprint-status.yaml")
	ErrSprintInvalid     = errors.New("invalid sprint-status.yaml")
	ErrStoryNotFound     = errors.New("unknown story")
	ErrEpicNotFound      = errors.New("unknown epic")
	ErrEpicsNotFound     = errors.New("no epics file")
	ErrStoryNotInEpics   = errors.New("story not declared in the epics")
	ErrStoryFileNotFound = errors.New("no story file")
	ErrInvalidKey        = errors.New("invalid story key")
	ErrInvalidStatus     = errors.New("invalid status")
	ErrSelection         = errors.New("invalid story selection")
	ErrPolicy            = errors.New("invalid workflow policy")
	ErrUnknownStep       = errors.New("unknown workflow step")
	ErrPrompt            = errors.New("invalid prompt template")
	ErrLockTimeout       = errors.New("timed out waiting for the sprint-status lock")
	ErrPipeline          = errors.New("pipeline not available")
	// ErrSpecInvalid marks a BMAD 6.12 spec file that cannot be read, or a
	// story with more than one new spec.
	ErrSpecInvalid = errors.New("invalid spec file")
	// ErrDeferredWorkInvalid marks a deferred-work.md that cannot be read:
	// it is never written until a person fixes the line named.
	ErrDeferredWorkInvalid = errors.New("invalid deferred-work.md")
)

// codes pairs each sentinel with its code, most specific first.
var codes = []struct {
	err  error
	code string
}{
	{ErrOutsideProject, "artifacts_outside_project"},
	{ErrBMADConfig, "bmad_config_invalid"},
	{ErrLayoutNotFound, "bmad_layout_not_found"},
	{ErrSprintNotFound, "sprint_status_not_found"},
	{ErrSprintUnsafe, "sprint_status_unsafe"},
	{ErrSprintInvalid, "sprint_status_invalid"},
	{ErrUnknownStep, "unknown_step"},
	{ErrStoryNotFound, "story_not_found"},
	{ErrEpicNotFound, "epic_not_found"},
	{ErrEpicsNotFound, "epics_not_found"},
	{ErrStoryNotInEpics, "story_not_in_epics"},
	{ErrStoryFileNotFound, "story_file_not_found"},
	{ErrInvalidKey, "invalid_story_key"},
	{ErrInvalidStatus, "invalid_status"},
	{ErrSelection, "invalid_selection"},
	{ErrPipeline, "pipeline_unavailable"},
	{ErrSpecInvalid, "spec_invalid"},
	{ErrDeferredWorkInvalid, "deferred_work_invalid"},
	{ErrStoriesInvalid, "stories_invalid"},
	{ErrRetroInvalid, "retro_invalid"},
	{ErrSpecFolder, "spec_folder_ambiguous"},
	{ErrStorySpecAmbiguous, "story_spec_ambiguous"},
	{ErrPolicy, "policy_invalid"},
	{ErrPrompt, "prompt_invalid"},
	{ErrLockTimeout, "sprint_status_locked"},
	{ErrContract, "verifier_contract"},
}

// Code maps an error from this package to the snake_case code users see;
// anything else is "workflow_io".
func Code(err error) string {
	for _, c := range codes {
		if errors.Is(err, c.err) {
			return c.code
		}
	}
	return "workflow_io"
}
