# Writes the MDM profile fixtures with Python's plistlib — an implementation independent
# of the Go decoder that reads them (howett.net/plist). Run: python3 make.py
import plistlib

profile = {
    "permissions": {"deny": ["Bash(curl:*)"]},
    "hooks": {
        "PreToolUse": [
            {"matcher": "Bash", "hooks": [{"type": "command", "command": "mdm-guard", "timeout": 5.5}]}
        ]
    },
    "allowManagedHooksOnly": False,
    "env": {"ORG": "acme"},
}
with open("profile.binary.plist", "wb") as f:
    plistlib.dump(profile, f, fmt=plistlib.FMT_BINARY)
with open("profile.xml.plist", "wb") as f:
    plistlib.dump(profile, f, fmt=plistlib.FMT_XML)
merge = dict(profile, managedSourcesBehavior="merge")
with open("merge.binary.plist", "wb") as f:
    plistlib.dump(merge, f, fmt=plistlib.FMT_BINARY)
import datetime
with open("date.xml.plist", "wb") as f:
    plistlib.dump({"hooks": {}, "deployed": datetime.datetime(2026, 11, 27)}, f, fmt=plistlib.FMT_XML)
with open("array.xml.plist", "wb") as f:
    plistlib.dump(["not", "a", "dict"], f, fmt=plistlib.FMT_XML)
