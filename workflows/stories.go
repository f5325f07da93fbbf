package workflows

import (
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
)

// Story is a story the project knows from sprint-status.yaml, its epics or a
// story file.
type Story struct {
	Key StoryKey
	// Slug is the name part of its key ("user-login"): from sprint-status.yaml,
	// else from its story file name, else made from its title.
	Slug  string
	Title string
	// Status is the sprint-status.yaml status, "" when the story has no entry.
	Status    string
	DependsOn []StoryKey
}

// FullKey is the key BMAD uses in file names: "1-2-user-login", or "1-2"
// without a slug.
func (s Story) FullKey() string {
	if s.Slug == "" {
		return s.Key.String()
	}
	return s.Key.String() + "-" + s.Slug
}

// Stories returns every story declared in sprint-status.yaml or the epics, in
// key order. Either source may be missing, not both.
func (p *Layout) Stories() ([]Story, error) {
	ss, sprintGen, err := p.sprintView()
	if err != nil && !errors.Is(err, ErrSprintNotFound) {
		return nil, err
	}
	epics, epicsGen, err := p.epics()
	if err != nil {
		return nil, err
	}
	return p.cachedStories(sprintGen, epicsGen, func() ([]Story, error) { return p.mergeStories(ss, epics) })
}

// mergeStories makes the story list from the sprint status (nil when there
// is none) and the epics; it reads nothing.
func (p *Layout) mergeStories(ss *SprintStatus, epics []Epic) ([]Story, error) {
	var out []Story
	at := map[StoryKey]int{}
	if ss != nil {
		for _, e := range ss.Entries() {
			if _, dup := at[e.Story]; e.IsStory() && !dup {
				at[e.Story] = len(out)
				out = append(out, Story{Key: e.Story, Slug: e.Slug, Status: NormalizeStatus(e.Status)})
			}
		}
	}
	for _, ep := range epics {
		for _, es := range ep.Stories {
			i, ok := at[es.Key]
			if !ok {
				i = len(out)
				at[es.Key] = i
				out = append(out, Story{Key: es.Key})
			}
			out[i].Title, out[i].DependsOn = es.Title, es.DependsOn
			if out[i].Slug == "" {
				out[i].Slug = Slugify(es.Title)
			}
		}
	}
	if ss == nil && len(epics) == 0 {
		return nil, fmt.Errorf("%w: and no epics in %s", ErrSprintNotFound, strings.Join(p.rels(append([]string{p.ArtifactsDir}, p.PlanningDirs...)), ", "))
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Key.Compare(out[j].Key) < 0 })
	return out, nil
}

// Story returns one story; one that only a story file knows is found too.
// An unknown story is ErrStoryNotFound.
func (p *Layout) Story(k StoryKey) (Story, error) {
	all, err := p.Stories()
	if err != nil && !errors.Is(err, ErrSprintNotFound) {
		return Story{}, err
	}
	if i := slices.IndexFunc(all, func(s Story) bool { return s.Key == k }); i >= 0 {
		return all[i], nil
	}
	files, ferr := p.StoryFiles(k)
	if ferr != nil {
		return Story{}, ferr
	}
	if len(files) > 0 {
		_, slug, _ := splitStoryKey(filepath.Base(files[0]))
		return Story{Key: k, Slug: slug}, nil
	}
	return Story{}, fmt.Errorf("%w %s: not in sprint-status.yaml, the epics or a story file", ErrStoryNotFound, k.Dotted())
}

// SelectStories picks stories for a run. epic ("" = any) limits them to one
// epic; spec is "all" (or ""), a list of story numbers and ranges within the
// epic ("1-3", "1,3,5", "2,4-6"), or full keys ("1.2", "auth-3-login"), mixed
// freely. An item "N-M" of two numbers is always a range; write the key 1-2 as
// "1.2". Numbers need an epic: --epic, or the project having only one. The
// result keeps the stories' key order, without duplicates.
func SelectStories(stories []Story, epic, spec string) ([]Story, error) {
	if epic != "" {
		id, err := ParseEpicID(epic)
		if err != nil {
			return nil, fmt.Errorf("%w: %v", ErrSelection, err)
		}
		epic = id
		if !slices.ContainsFunc(stories, func(s Story) bool { return s.Key.Epic == epic }) {
			return nil, fmt.Errorf("%w: epic %s has no stories", ErrSelection, epic)
		}
	}
	pool := stories
	if epic != "" {
		pool = filter(stories, func(s Story) bool { return s.Key.Epic == epic })
	}
	spec = strings.TrimSpace(spec)
	if spec == "" || strings.EqualFold(spec, "all") {
		if len(pool) == 0 {
			return nil, fmt.Errorf("%w: the project has no stories", ErrSelection)
		}
		return pool, nil
	}
	want := map[StoryKey]bool{}
	for _, item := range strings.Split(spec, ",") {
		keys, err := selectItem(stories, pool, epic, strings.TrimSpace(item))
		if err != nil {
			return nil, err
		}
		for _, k := range keys {
			want[k] = true
		}
	}
	return filter(stories, func(s Story) bool { return want[s.Key] }), nil
}

// selectItem resolves one item of a --stories list to story keys.
func selectItem(stories, pool []Story, epic, item string) ([]StoryKey, error) {
	if item == "" {
		return nil, fmt.Errorf("%w: empty item in the story list", ErrSelection)
	}
	lo, hi, isNum := numberRange(item)
	if !isNum {
		k, err := ParseStoryKey(item)
		if err != nil {
			return nil, fmt.Errorf("%w: %q is neither a story number, a range nor a story key", ErrSelection, item)
		}
		if !slices.ContainsFunc(pool, func(s Story) bool { return s.Key == k }) {
			if epic != "" && k.Epic != epic {
				return nil, fmt.Errorf("%w: story %s is not in epic %s", ErrSelection, k.Dotted(), epic)
			}
			return nil, fmt.Errorf("%w: no story %s", ErrSelection, k.Dotted())
		}
		return []StoryKey{k}, nil
	}
	if lo > hi {
		return nil, fmt.Errorf("%w: range %q runs backwards", ErrSelection, item)
	}
	if epic == "" {
		epics := epicIDs(stories)
		if len(epics) != 1 {
			return nil, fmt.Errorf("%w: %q is a story number; name the epic with --epic (the project has epics %s)", ErrSelection, item, strings.Join(epics, ", "))
		}
		epic = epics[0]
	}
	var keys []StoryKey
	for n := lo; n <= hi; n++ {
		k := StoryKey{Epic: epic, Num: n}
		if !slices.ContainsFunc(stories, func(s Story) bool { return s.Key == k }) {
			return nil, fmt.Errorf("%w: epic %s has no story %s", ErrSelection, epic, k.Dotted())
		}
		keys = append(keys, k)
	}
	return keys, nil
}

// numberRange reads "3" or "1-3".
func numberRange(item string) (lo, hi int, ok bool) {
	a, b, isRange := strings.Cut(item, "-")
	if !isRange {
		b = a
	}
	if !allDigits(a) || !allDigits(b) {
		return 0, 0, false
	}
	lo, err1 := strconv.Atoi(a)
	hi, err2 := strconv.Atoi(b)
	return lo, hi, err1 == nil && err2 == nil && lo > 0
}

func epicIDs(stories []Story) []string {
	var ids []string
	for _, s := range stories {
		if !slices.Contains(ids, s.Key.Epic) {
			ids = append(ids, s.Key.Epic)
		}
	}
	return ids
}

func filter(stories []Story, keep func(Story) bool) []Story {
	var out []Story
	for _, s := range stories {
		if keep(s) {
			out = append(out, s)
		}
	}
	return out
}
