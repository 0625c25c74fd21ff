package toolset_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/gantry-dev/gantry/tool"
	"github.com/gantry-dev/gantry/toolset"
)

// tablesDB stands for a database the session is connected to.
type tablesDB struct{ tables []string }

func (db *tablesDB) Tables(ctx context.Context) ([]string, error) { return db.tables, nil }

type sqlIn struct {
	SQL string `json:"sql" jsonschema:"One SELECT statement"`
}

// A tool computes its prompt once per pool from the session (here: the
// tables of the database the session is connected to). The pool calls the
// SessionFunc when it builds the tool, within Options.SessionTimeout, and
// freezes the answer: every request of the session carries the same bytes.
func ExamplePool_sessionDescription() {
	db := &tablesDB{tables: []string{"orders", "users"}}
	query := tool.Must(tool.NewText("Query", "Runs a read-only SQL query.", func(ctx context.Context, env *tool.Env, in sqlIn) (string, error) {
		return "0 rows", nil
	}, tool.ReadOnly(), tool.SessionFunc(func(ctx context.Context, env *tool.Env) (tool.SessionSpec, error) {
		tables, err := db.Tables(ctx) // ctx carries the deadline
		if err != nil {
			return tool.SessionSpec{}, err // the tool is left out; Build reports it
		}
		return tool.SessionSpec{Prompt: "Tables: " + strings.Join(tables, ", ") + "."}, nil
	})))
	p, err := toolset.NewPool(context.Background(), toolset.Options{Tools: []tool.Tool{query}, SessionTimeout: 5 * time.Second})
	if err != nil {
		panic(err)
	}
	if err := p.Build(); err != nil {
		panic(err)
	}
	db.tables = append(db.tables, "invoices") // too late: the session's prompt is frozen
	fmt.Println(toolset.FullDescription(p.Specs()[0]))
	// Output:
	// Runs a read-only SQL query.
	//
	// Tables: orders, users.
}

// DiscoverTools is another name of ToolSearch; a pool reports which
// deferred tools the model has not loaded yet, so that the executor can
// tell a model that guessed such a tool's input to load it first.
func ExampleDiscoverToolsName() {
	rare := tool.Must(tool.NewRaw("Deploy", "Deploys the service.", json.RawMessage(`{"type":"object","properties":{"env":{"type":"string"}},"required":["env"]}`),
		func(context.Context, *tool.Env, json.RawMessage) (*tool.Result, error) {
			return tool.TextResult("deployed"), nil
		},
		tool.WithDefer(tool.Deferral{ShouldDefer: true, SearchHint: "deploy the service to an environment"})))
	p, err := toolset.NewPool(context.Background(), toolset.Options{Tools: []tool.Tool{rare}, Defer: true})
	if err != nil {
		panic(err)
	}
	search, _ := p.Lookup(toolset.DiscoverToolsName)
	fmt.Println(search.Spec().Name)
	fmt.Println("Deploy unloaded:", p.Unloaded("Deploy"))
	p.Load("Deploy") // what ToolSearch select:Deploy does
	fmt.Println("Deploy unloaded:", p.Unloaded("Deploy"))
	// Output:
	// ToolSearch
	// Deploy unloaded: true
	// Deploy unloaded: false
}
