package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/user"
	"path/filepath"
	"runtime"
	"time"

	"github.com/urfave/cli/v2"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"

	"github.com/hookd/hookd/cmd/hookd/internal/clix"
	"github.com/hookd/hookd/cmd/hookd/internal/show"
	"github.com/hookd/hookd/configs"
	"github.com/hookd/hookd/configs/settings"
	"github.com/hookd/hookd/protocol"
	"github.com/hookd/hookd/protocol/lite"
)

// App builds the hookd command line.
func App() *cli.App {
	app := &cli.App{
		Name:    "hookd",
		Usage:   "run Claude Code hooks from a long-lived daemon",
		Version: protocol.BuildInfo().Version,
		Flags:   globalFlags(),
		Commands: []*cli.Command{
			serveCommand(), statusCommand(), reloadCommand(), validateCommand(), runCommand(), eventsCommand(),
			installCommand(), uninstallCommand(), auditCommand(), clix.CompletionCommand(), versionCommand(), serviceCommand(), doctorCommand(), setupCommand(),
		},
		EnableBashCompletion: true,
	}
	inheritGlobals(app.Commands, app.Flags)
	clix.Conventions(app)
	cli.VersionPrinter = printVersion
	return app
}

// hostOS is the OS whose conventions the default paths follow (lite.PathsFor: the one
// place hookd decides a path per OS); tests set it to check another OS's answers.
var hostOS = runtime.GOOS

// defaultPaths are this user's default paths on hostOS.
func defaultPaths() lite.Paths { return lite.PathsFor(hostOS, getenvUser, os.Geteuid()) }

// getenvUser is os.Getenv, with USER (which names the user's MDM profile) filled in from
// the user database when the environment lacks it.
func getenvUser(k string) string {
	v := os.Getenv(k)
	if v == "" && k == "USER" {
		if u, err := user.Current(); err == nil {
			v = u.Username
		}
	}
	return v
}

func defaultUserDir() string { return defaultPaths().UserDir }

func defaultStateDir() string { return defaultPaths().StateDir }

func defaultConfigPath() string { return defaultPaths().ConfigFile }

// loadConfig reads hookd's own configuration. An explicit --config must exist; the
// default path may be absent (then the embedded default applies).
func loadConfig(c *cli.Context) (*configs.DaemonConfig, string, error) {
	path := c.String("config")
	explicit := path != ""
	if !explicit {
		path = defaultConfigPath()
		if _, err := os.Stat(path); errors.Is(err, os.ErrNotExist) {
			return configs.DefaultDaemonConfig(), "(embedded default)", nil
		}
	}
	cfg, err := configs.LoadDaemonConfig(path)
	if err != nil {
		return nil, path, err
	}
	return cfg, path, nil
}

// sources builds the settings hierarchy from flags and hookd's configuration.
func sources(c *cli.Context, cfg *configs.DaemonConfig) settings.Sources {
	home, _ := os.UserHomeDir()
	src := settings.Sources{ManagedDir: c.String("managed-dir"), MDMProfiles: c.StringSlice("mdm-profile"), UserDir: c.String("user-dir"), Home: home,
		CodexHome: os.Getenv("CODEX_HOME")}
	for _, f := range append(append([]string(nil), cfg.Settings...), c.StringSlice("settings")...) {
		abs, err := filepath.Abs(f)
		if err == nil {
			f = abs
		}
		src.Extra = append(src.Extra, settings.FileRef{Path: f, Kind: settings.KindFlag})
	}
	return src
}

func newLogger(c *cli.Context) *zap.Logger {
	if c.Bool("debug") {
		cfg := zap.NewDevelopmentConfig()
		cfg.OutputPaths, cfg.ErrorOutputPaths = []string{"stderr"}, []string{"stderr"}
		cfg.EncoderConfig.EncodeTime = utcTime
		l, err := cfg.Build()
		if err == nil {
			return l
		}
	}
	enc := zap.NewProductionEncoderConfig()
	// UTC with a Z, as every time hookd prints (when).
	enc.TimeKey = "ts"
	enc.EncodeTime = utcTime
	core := zapcore.NewCore(zapcore.NewJSONEncoder(enc), zapcore.Lock(zapcore.AddSync(c.App.ErrWriter)), zap.InfoLevel)
	return zap.New(core)
}

// utcTime encodes a log record's time as every time hookd prints (when): UTC with a Z.
func utcTime(t time.Time, e zapcore.PrimitiveArrayEncoder) { e.AppendString(show.When(t)) }

// newClient dials the daemon, turning "no daemon" into an actionable message.
func newClient(c *cli.Context) (*protocol.Client, error) {
	path := c.String("socket")
	cl, err := protocol.Dial(c.Context, path)
	if err != nil {
		// The dial error without Dial's own "dial PATH" prefix, which the message repeats;
		// an error Dial did not wrap (no socket there at all) is shown as it is.
		cause := err
		if u := errors.Unwrap(err); u != nil {
			cause = u
		}
		return nil, fmt.Errorf("cannot reach hookd at %s (is it running? `hookd serve`): %w", path, cause)
	}
	return cl, nil
}

// call sends one non-event op and returns the result frame's data.
func call(c *cli.Context, op string) ([]byte, error) {
	cl, err := newClient(c)
	if err != nil {
		return nil, err
	}
	defer cl.Close()
	f, err := cl.Do(context.Background(), &protocol.Request{Op: op}, nil)
	if err != nil {
		return nil, err
	}
	return f.Data, nil
}

// exitError is an error with an exit code and an optional message.
type exitError struct {
	code int
	msg  string
}

func (e exitError) Error() string { return e.msg }
func (e exitError) ExitCode() int { return e.code }

func encodeRequest(req *protocol.Request) ([]byte, error) {
	return json.Marshal(req)
}
