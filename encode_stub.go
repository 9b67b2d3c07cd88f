package main

import (
	"errors"
	"net/url"
	"strings"
)

type routeSpec struct{ Method, Route, OperationID string }
type routeTable struct{ specs []routeSpec }

func newRouteTable(r []routeSpec) *routeTable { return &routeTable{r} }
func (t *routeTable) match(method, path string) (string, map[string]string, error) {
	segs := strings.Split(path, "/")
	for _, s := range t.specs {
		rs := strings.Split(s.Route, "/")
		if s.Method != method || len(rs) != len(segs) {
			continue
		}
		params := map[string]string{}
		ok := true
		for i := range rs {
			if strings.HasPrefix(rs[i], "{") {
				params[strings.Trim(rs[i], "{}")] = segs[i]
			} else if rs[i] != segs[i] {
				ok = false
			}
		}
		if ok {
			return s.OperationID, params, nil
		}
	}
	return "", nil, errors.New("no route")
}
func checkRawPath(p string) (string, error) { return p, nil }
func encodePath(route string, params map[string]string) (string, error) {
	for k, v := range params {
		route = strings.ReplaceAll(route, "{"+k+"}", url.PathEscape(v))
	}
	return route, nil
}
