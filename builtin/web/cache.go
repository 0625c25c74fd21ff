package web

import (
	"container/list"
	"sync"
	"time"
)

// cache is an LRU of fetched pages bounded by bytes, each entry valid for
// a fixed time. It is safe for concurrent use.
type cache struct {
	mu    sync.Mutex
	ttl   time.Duration
	max   int64
	size  int64
	now   func() time.Time
	ll    *list.List // front = most recently used
	items map[string]*list.Element
}

type cacheEntry struct {
	key     string
	p       *page
	cost    int64
	expires time.Time
}

func newCache(ttl time.Duration, max int64, now func() time.Time) *cache {
	return &cache{ttl: ttl, max: max, now: now, ll: list.New(), items: make(map[string]*list.Element)}
}

// get returns the page cached under key if it has not expired.
func (c *cache) get(key string) (*page, bool) {
	if c == nil {
		return nil, false
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	el, ok := c.items[key]
	if !ok {
		return nil, false
	}
	e := el.Value.(*cacheEntry)
	if !c.now().Before(e.expires) {
		c.remove(el)
		return nil, false
	}
	c.ll.MoveToFront(el)
	return e.p, true
}

// put caches p under key. A page larger than the whole cache is not kept.
func (c *cache) put(key string, p *page) {
	if c == nil {
		return
	}
	cost := p.cost() + int64(len(key))
	if cost > c.max {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if el, ok := c.items[key]; ok {
		c.remove(el)
	}
	c.items[key] = c.ll.PushFront(&cacheEntry{key: key, p: p, cost: cost, expires: c.now().Add(c.ttl)})
	c.size += cost
	for c.size > c.max {
		c.remove(c.ll.Back())
	}
}

func (c *cache) remove(el *list.Element) {
	e := c.ll.Remove(el).(*cacheEntry)
	delete(c.items, e.key)
	c.size -= e.cost
}
