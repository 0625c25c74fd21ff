package web

import (
	"context"
	"io"
	"strings"

	"github.com/JohannesKaufmann/html-to-markdown/v2/converter"
	"github.com/JohannesKaufmann/html-to-markdown/v2/plugin/base"
	"github.com/JohannesKaufmann/html-to-markdown/v2/plugin/commonmark"
	"github.com/JohannesKaufmann/html-to-markdown/v2/plugin/table"
	"golang.org/x/net/html"
	"golang.org/x/net/html/atom"
)

// stripped are the elements whose content never reaches the Markdown:
// code and styling, navigation and page chrome, forms and embedded
// objects.
var stripped = []string{
	"script", "style", "noscript", "template", "nav", "header", "footer", "aside",
	"form", "button", "input", "select", "textarea", "iframe", "frame", "frameset",
	"object", "embed", "svg", "canvas", "dialog", "link", "meta",
}

// newConverter returns an HTML-to-Markdown converter (base, CommonMark and
// tables, with the stripped elements removed). A Converter is safe for
// concurrent use once built and holds no per-page state.
func newConverter() *converter.Converter {
	c := converter.NewConverter(converter.WithPlugins(
		base.NewBasePlugin(),
		commonmark.NewCommonmarkPlugin(),
		table.NewTablePlugin(),
	))
	for _, tag := range stripped {
		c.Register.TagType(tag, converter.TagTypeRemove, converter.PriorityEarly)
	}
	return c
}

// htmlToMarkdown parses an HTML page and converts it to Markdown, links
// made absolute against pageURL. It returns the page's title too.
func htmlToMarkdown(ctx context.Context, conv *converter.Converter, r io.Reader, pageURL string) (md, title string, err error) {
	doc, err := html.Parse(r)
	if err != nil {
		return "", "", err
	}
	title = findTitle(doc)
	prune(doc)
	out, err := conv.ConvertNode(doc, converter.WithContext(ctx), converter.WithDomain(pageURL))
	if err != nil {
		return "", "", err
	}
	return strings.TrimSpace(string(out)), title, nil
}

// findTitle returns the text of the first <title>, whitespace collapsed.
func findTitle(n *html.Node) string {
	if n.Type == html.ElementNode && n.DataAtom == atom.Title {
		var b strings.Builder
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			if c.Type == html.TextNode {
				b.WriteString(c.Data)
			}
		}
		return strings.Join(strings.Fields(b.String()), " ")
	}
	if n.Type == html.ElementNode && (n.DataAtom == atom.Body) {
		return ""
	}
	for c := n.FirstChild; c != nil; c = c.NextSibling {
		if t := findTitle(c); t != "" {
			return t
		}
	}
	return ""
}

// strippedAtoms are the stripped elements as atoms, for prune.
var strippedAtoms = func() map[atom.Atom]bool {
	m := make(map[atom.Atom]bool, len(stripped))
	for _, tag := range stripped {
		m[atom.Lookup([]byte(tag))] = true
	}
	m[atom.Head] = true
	return m
}()

// prune removes the stripped elements and comments from the tree in one
// pass before conversion, so that the converter's passes never walk the
// scripts, styles, SVGs and navigation that make up much of a modern page.
// (The converter removes them too; this only saves its time.)
func prune(n *html.Node) {
	for c := n.FirstChild; c != nil; {
		next := c.NextSibling
		switch {
		case c.Type == html.CommentNode, c.Type == html.ElementNode && strippedAtoms[c.DataAtom]:
			n.RemoveChild(c)
		case c.FirstChild != nil:
			prune(c)
		}
		c = next
	}
}
