// Package home finds the Gantry home: the directory where Gantry keeps the
// user's settings, transcripts, checkpoints, memory, skills, agents and the
// durable store. It is the only place that reads $GANTRY_HOME.
package home

import "path/filepath"

// Env is the environment variable that names the Gantry home.
const Env = "GANTRY_HOME"

// DirName is the Gantry home's name inside the user's home directory.
const DirName = ".gantry"

// Dir returns the Gantry home, looked up in this order:
//
//  1. $GANTRY_HOME, when set and not empty, as given;
//  2. userHome/.gantry, when userHome is not "";
//  3. $HOME/.gantry, when $HOME is set and not empty.
//
// getenv reads the environment; nil means no variable is set (callers
// that want the process environment pass os.Getenv). Dir returns "" when
// none of the three gives a directory; it never guesses a relative path.
func Dir(getenv func(string) string, userHome string) string {
	if getenv == nil {
		getenv = func(string) string { return "" }
	}
	if h := getenv(Env); h != "" {
		return h
	}
	if userHome == "" {
		userHome = getenv("HOME")
	}
	if userHome == "" {
		return ""
	}
	return filepath.Join(userHome, DirName)
}
