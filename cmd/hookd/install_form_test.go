package main

import (
	"testing"

	"github.com/hookd/hookd/configs/install"
	"github.com/hookd/hookd/configs/service"
)

func TestFormFor(t *testing.T) {
	for in, want := range map[string]string{
		"2.1.332": install.FormExec,
		"2.1.139": install.FormExec,
		"2.1.138": install.FormShell,
		"2.1.14":  install.FormShell, // not a version claude prints
		"2.0.999": install.FormShell,
		"2.2.0":   install.FormExec,
		"10.0.0":  install.FormExec,
		"1.0.58":  install.FormShell,
		"":        install.FormShell,
		"claude:": install.FormShell,
	} {
		if got, why := formFor(in); got != want || why == "" {
			t.Errorf("formFor(%q) = %q (%s), want %q", in, got, why, want)
		}
	}
}

func TestServiceTransport(t *testing.T) {
	ep := &install.HTTPEndpoint{Listen: "127.0.0.1:21000", Token: "t"}
	d := service.Description{HTTP: "127.0.0.1:21000"}
	up := service.Status{Manager: "systemd", Available: true, Enabled: "enabled", Files: []service.FileStatus{{State: "current"}}}
	if tr, why := serviceTransport(ep, d, up); tr != install.TransportHTTP || why == "" {
		t.Errorf("socket-activated service holding the port: %s (%s)", tr, why)
	}
	for name, c := range map[string]struct {
		d  service.Description
		st service.Status
	}{
		"the socket does not hold the port": {service.Description{}, up},
		"another port":                      {service.Description{HTTP: "127.0.0.1:21001"}, up},
		"no service manager":                {d, service.Status{Manager: "systemd", Files: up.Files, Enabled: "enabled"}},
		"units stale":                       {d, service.Status{Manager: "systemd", Available: true, Enabled: "enabled", Files: []service.FileStatus{{State: "stale"}}}},
		"units absent":                      {d, service.Status{Manager: "systemd", Available: true, Enabled: "enabled", Files: []service.FileStatus{{State: "absent"}}}},
		"socket disabled":                   {d, service.Status{Manager: "systemd", Available: true, Enabled: "disabled", Files: up.Files}},
	} {
		if tr, _ := serviceTransport(ep, c.d, c.st); tr != install.TransportHookc {
			t.Errorf("%s: %s, want hookc", name, tr)
		}
	}
}
