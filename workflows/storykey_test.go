package workflows

import (
	"errors"
	"testing"
)

func TestParseStoryKeyForms(t *testing.T) {
	cases := []struct {
		in         string
		epic       string
		num        int
		slug       string
		str, dotty string
	}{
		{"1.2", "1", 2, "", "1-2", "1.2"},
		{"1-2", "1", 2, "", "1-2", "1.2"},
		{"1-2-user-login", "1", 2, "user-login", "1-2", "1.2"},
		{"1-2-user-login.md", "1", 2, "user-login", "1-2", "1.2"},
		{" Story 1.2 ", "1", 2, "", "1-2", "1.2"},
		{"story-3-4", "3", 4, "", "3-4", "3.4"},
		{"01.02", "1", 2, "", "1-2", "1.2"},
		{"12-10-big-epic", "12", 10, "big-epic", "12-10", "12.10"},
		{"auth.3", "auth", 3, "", "auth-3", "auth.3"},
		{"Auth-3-slug", "auth", 3, "slug", "auth-3", "auth.3"},
		{"user-mgmt-3-invite-users", "user-mgmt", 3, "invite-users", "user-mgmt-3", "user-mgmt.3"},
		{"user-mgmt.3", "user-mgmt", 3, "", "user-mgmt-3", "user-mgmt.3"},
		{"1-2-upgrade-to-v1.5", "1", 2, "upgrade-to-v1.5", "1-2", "1.2"},
	}
	for _, c := range cases {
		k, slug, err := splitStoryKey(c.in)
		if err != nil {
			t.Errorf("%q: %v", c.in, err)
			continue
		}
		if k.Epic != c.epic || k.Num != c.num || slug != c.slug {
			t.Errorf("%q = %+v slug %q, want %s/%d slug %q", c.in, k, slug, c.epic, c.num, c.slug)
		}
		if k.String() != c.str || k.Dotted() != c.dotty {
			t.Errorf("%q: String %q Dotted %q, want %q %q", c.in, k.String(), k.Dotted(), c.str, c.dotty)
		}
		if again, err := ParseStoryKey(k.String()); err != nil || again != k {
			t.Errorf("%q: String() does not round-trip: %v %v", c.in, again, err)
		}
		if again, err := ParseStoryKey(k.Dotted()); err != nil || again != k {
			t.Errorf("%q: Dotted() does not round-trip: %v %v", c.in, again, err)
		}
	}
}

func TestParseStoryKeyRejects(t *testing.T) {
	for _, in := range []string{"", "1", "auth", "epic-1", "epic-1-retrospective", "1.0", "1-0", "1.x", "-1-2", "a b-2", "1.2.3", "1--2"} {
		if k, err := ParseStoryKey(in); err == nil {
			t.Errorf("%q parsed as %+v, want an error", in, k)
		} else if !errors.Is(err, ErrInvalidKey) || Code(err) != "invalid_story_key" {
			t.Errorf("%q: error %v is not ErrInvalidKey", in, err)
		}
	}
}

func TestParseEpicID(t *testing.T) {
	for in, want := range map[string]string{"1": "1", "01": "1", "epic-2": "2", "Epic 3": "3", "auth": "auth", "epic-user-mgmt": "user-mgmt"} {
		if got, err := ParseEpicID(in); err != nil || got != want {
			t.Errorf("ParseEpicID(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	for _, in := range []string{"", "epic", "a.b", "-x"} {
		if _, err := ParseEpicID(in); !errors.Is(err, ErrInvalidKey) {
			t.Errorf("ParseEpicID(%q) err = %v, want ErrInvalidKey", in, err)
		}
	}
}

func TestStoryKeyCompare(t *testing.T) {
	ordered := []StoryKey{{"1", 1}, {"1", 2}, {"1", 10}, {"2", 1}, {"10", 1}, {"auth", 1}, {"auth", 2}, {"billing", 1}}
	for i := range ordered {
		for j := range ordered {
			c := ordered[i].Compare(ordered[j])
			if (i < j && c >= 0) || (i > j && c <= 0) || (i == j && c != 0) {
				t.Errorf("Compare(%v, %v) = %d", ordered[i], ordered[j], c)
			}
		}
	}
}

func TestEpicKey(t *testing.T) {
	k := StoryKey{Epic: "auth"}
	if !k.IsEpic() || k.String() != "auth" || k.Dotted() != "auth" {
		t.Errorf("epic key %+v: IsEpic %v String %q Dotted %q", k, k.IsEpic(), k.String(), k.Dotted())
	}
}

func TestSlugify(t *testing.T) {
	for in, want := range map[string]string{
		"User Login":               "user-login",
		"User's Login (OAuth 2.0)": "users-login-oauth-2-0",
		"  Password -- Reset  ":    "password-reset",
		"Über Café":                "über-café",
	} {
		if got := Slugify(in); got != want {
			t.Errorf("Slugify(%q) = %q, want %q", in, got, want)
		}
	}
}
