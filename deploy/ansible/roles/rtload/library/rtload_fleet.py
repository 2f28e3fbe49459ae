#!/usr/bin/python3
# -*- coding: utf-8 -*-
# rtload role: the controller's side of treating hosts as untrusted (issue 23).
# Runs on the controller (delegate_to: localhost); stdlib only.

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
module: rtload_fleet
short_description: Name, unpack and check rtload results on the controller without trusting the host they came from
description:
  - C(action=label) checks a host's C(uname -r) against a strict pattern and returns
    the controller path C(<fleet_dir>/<host>/<kernel>) built from the inventory name
    and that validated label only, and makes C(<fleet_dir>/<host>); it fails when that
    path exists (results are never mixed).
  - C(action=unpack) unpacks a fetched results archive into a new directory. Only
    directories and regular files are accepted: a symbolic or hard link, a FIFO, a
    device, an absolute or C(..) name, a duplicate, a name with control characters,
    or an archive over I(max_bytes) or I(max_members) refuses the whole archive and
    nothing is left behind. Files are created 0644 with O_EXCL|O_NOFOLLOW, never
    owned by the archive's owners.
  - C(action=check_tree) checks that a directory on the controller (a baseline for
    C(rtload check)) holds only directories and regular files, within the same bounds;
    with I(dest) it also packs exactly those into a new .tar.gz (under I(top_name)/,
    files 0644 and directories 0755, owned by root) to unpack on a host in one step.
  - C(action=write) writes I(files) (each a C(name) relative to I(fleet_dir), at most
    two plain components such as C(host0/status-STAMP.json), and its C(content)),
    making the host's directory when needed; each file is replaced atomically (a new
    file renamed over it), never written through a link. I(remove) removes files the
    role made in the fleet directory (a baseline packed for a host).
  - A refusal fails with C(rtload_state) C(rejected) (the host's data) or C(invalid)
    (the operator's: an inventory name, a baseline) and a message that names each bad
    member (escaped), never its content or a link's target.
options:
  action: {type: str, required: true, choices: [label, unpack, check_tree, write]}
  host: {type: str, description: inventory name (label)}
  kernel: {type: str, description: the host's uname -r output (label)}
  fleet_dir: {type: path, description: the fleet directory (label)}
  src: {type: path, description: the archive (unpack) or the directory (check_tree)}
  dest: {type: path, description: "the directory to create (unpack), or the archive to create (check_tree); must not exist"}
  top_name: {type: str, description: the archive's top directory (check_tree with dest; default the directory's name)}
  max_bytes: {type: int, default: 17179869184, description: bound on the sum of file sizes}
  max_members: {type: int, default: 100000, description: bound on the number of entries}
  remove_src: {type: bool, default: true, description: remove the archive once unpacked (a refused one is kept)}
  files: {type: list, elements: dict, description: "{name, content} each (write)"}
  remove: {type: list, elements: path, description: "files to remove (write): absolute paths of regular files inside fleet_dir"}
"""

import json
import os
import re
import shutil
import stat
import tarfile
import tempfile
import zlib

from ansible.module_utils.basic import AnsibleModule

# A kernel release as uname(2) gives it (at most 64 bytes): 6.1.0-18-amd64,
# 5.14.0-362.el9.x86_64, 6.6.0-rc1+, 6.8.0-rt8. It starts with a letter or
# digit, so "." and ".." cannot match, and ".." anywhere is refused apart.
KERNEL_LABEL = re.compile(r"[0-9A-Za-z][0-9A-Za-z._+~-]{0,63}")
KERNEL_ALLOWED = "a letter or digit, then at most 63 of letters, digits and . _ + ~ -, no '..'"

# An inventory name used as a directory: no "/" and not "." or "..".
HOST_LABEL = re.compile(r"[0-9A-Za-z_][0-9A-Za-z_.:@%+=,-]{0,253}")

# Characters a member name may not hold: C0 and C1 controls, DEL, and the
# bidirectional overrides that reorder what a terminal shows.
BAD_CHARS = re.compile(u"[\u0000-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]")

MAX_DEPTH = 8
MAX_PROBLEMS = 10
CHUNK = 1 << 20


def shown(s, limit=80):
    """s escaped for a message: ASCII, quoted, control characters as escapes, at most limit characters of s."""
    more = "" if len(s) <= limit else u"\u2026 (%d characters)" % len(s)
    return json.dumps(s[:limit]) + more


class Refused(Exception):
    """The archive or tree is refused; args[0] lists the problems."""


def label(module):
    p = module.params
    host, kernel, fleet = p["host"] or "", p["kernel"], p["fleet_dir"]
    if kernel is None or fleet is None:
        module.fail_json(msg="action=label needs host, kernel and fleet_dir")
    if not HOST_LABEL.fullmatch(host) or ".." in host:
        module.fail_json(msg="inventory name %s cannot name a directory on the controller (allowed: letters, digits and _ . : @ %% + = , -; no '..')" % shown(host),
                         rtload_state="invalid")
    if not KERNEL_LABEL.fullmatch(kernel) or ".." in kernel:
        module.fail_json(msg="%s: uname -r printed %s, which is not a kernel release (allowed: %s): "
                         "it would name a path on the controller, so nothing was run" % (host, shown(kernel), KERNEL_ALLOWED),
                         rtload_state="rejected")
    local = os.path.join(fleet, host, kernel)
    if os.path.lexists(local):
        module.fail_json(msg="%s already holds results for %s under %s; nothing was run (give -e rtload_results_dir=NEW_DIR)"
                         % (local, host, kernel))
    changed = False
    if not module.check_mode:
        try:
            os.mkdir(os.path.dirname(local), 0o755)
            changed = True
        except FileExistsError:
            pass
    module.exit_json(changed=changed, kernel=kernel, local=local)


def member_name(name):
    """The member's path relative to the top (no leading './'), or raises Refused."""
    if BAD_CHARS.search(name):
        raise Refused("%s: the name holds control characters" % shown(name))
    if name.startswith("/"):
        raise Refused("%s: an absolute name" % shown(name))
    parts = [c for c in name.split("/") if c not in ("", ".")]
    if any(c == ".." for c in parts):
        raise Refused("%s: a name with '..'" % shown(name))
    if len(parts) > MAX_DEPTH:
        raise Refused("%s: deeper than %d directories" % (shown(name), MAX_DEPTH))
    return "/".join(parts)


def kind(ti):
    """What a tar member is, in words, for a refusal."""
    if ti.issym():
        return "a symbolic link"
    if ti.islnk():
        return "a hard link"
    if ti.isfifo():
        return "a FIFO"
    if ti.ischr():
        return "a character device"
    if ti.isblk():
        return "a block device"
    return "a member of type %r" % ti.type


class Bounds:
    def __init__(self, max_bytes, max_members):
        self.max_bytes, self.max_members = max_bytes, max_members
        self.bytes, self.members = 0, 0

    def add(self, name, size):
        """Counts one entry of size bytes; raises Refused past either bound."""
        self.members += 1
        self.bytes += max(0, size)
        if self.members > self.max_members:
            raise Refused("more than %d entries (max_members)" % self.max_members)
        if self.bytes > self.max_bytes:
            raise Refused("%s: the files add up to more than %d bytes (max_bytes)" % (shown(name), self.max_bytes))


def unpack_into(tf, top, bounds):
    """Extracts tf's members into the new, empty directory top; returns the problems (none: all extracted).

    Every path under top is one this function made, from a name checked
    first, so nothing on the way can be a link; files are created with
    O_EXCL|O_NOFOLLOW all the same.
    """
    problems = []
    made = set([""])
    for ti in tf:
        try:
            # Counted first, whatever the member is: a refused member's data is
            # still read through to reach the next header.
            bounds.add(ti.name, ti.size)
            rel = member_name(ti.name)
            if not (ti.isdir() or ti.isreg()):
                raise Refused("%s: %s" % (shown(rel or "."), kind(ti)))
            parent = os.path.dirname(rel)
            if parent not in made:
                # A file whose directory came without its own member.
                os.makedirs(os.path.join(top, parent), 0o755, exist_ok=True)
                acc = ""
                for c in parent.split("/"):
                    acc = c if not acc else acc + "/" + c
                    made.add(acc)
            if ti.isdir():
                if rel not in made:
                    os.mkdir(os.path.join(top, rel), 0o755)
                    made.add(rel)
                continue
            if rel == "" or rel in made:
                raise Refused("%s: a file where a directory is" % shown(rel or "."))
            fd = os.open(os.path.join(top, rel), os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | getattr(os, "O_CLOEXEC", 0), 0o644)
            with os.fdopen(fd, "wb") as out:
                src = tf.extractfile(ti)
                left = ti.size
                while left > 0:
                    b = src.read(min(CHUNK, left))
                    if not b:
                        raise Refused("%s: the archive ends inside this file" % shown(rel))
                    out.write(b)
                    left -= len(b)
        except FileExistsError:
            problems.append("%s: a duplicate name" % shown(ti.name))
        except Refused as e:
            problems.append(e.args[0])
        except OSError as e:
            problems.append("%s: %s" % (shown(ti.name), e.strerror))
        if bounds.members > bounds.max_members or bounds.bytes > bounds.max_bytes:
            break
        if len(problems) >= MAX_PROBLEMS:
            problems.append("… (stopped at %d problems)" % MAX_PROBLEMS)
            break
    return problems


def unpack(module):
    p = module.params
    src, dest = p["src"], p["dest"]
    if not src or not dest:
        module.fail_json(msg="action=unpack needs src and dest")
    dest = dest.rstrip("/")
    if os.path.lexists(dest):
        module.fail_json(msg="%s already exists: results are never unpacked over others" % dest)
    tmp = tempfile.mkdtemp(prefix="." + os.path.basename(dest) + ".unpacking-", dir=os.path.dirname(dest))
    bounds = Bounds(p["max_bytes"], p["max_members"])
    problems = []
    try:
        try:
            # Streaming ("r|gz"): one pass, nothing kept but the member headers.
            with tarfile.open(src, mode="r|gz") as tf:
                problems = unpack_into(tf, tmp, bounds)
        except (tarfile.TarError, EOFError, OSError, ValueError, zlib.error) as e:
            problems.append("not a readable .tar.gz: %s" % shown(str(e), 200))
        if not problems:
            os.chmod(tmp, 0o755)
            os.rename(tmp, dest)
    finally:
        if problems or os.path.lexists(tmp):
            shutil.rmtree(tmp, ignore_errors=True)
    if problems:
        module.fail_json(msg="results archive %s refused, nothing unpacked (the archive is kept for a look): %s "
                         "(a results directory holds only directories and regular files)" % (src, "; ".join(problems)),
                         rtload_state="rejected", problems=problems)
    if p["remove_src"]:
        os.unlink(src)
    module.exit_json(changed=True, dest=dest, files=bounds.members, bytes=bounds.bytes, summary=summary_flags(dest))


def summary_flags(dest):
    """degraded and stopped from dest/summary.json (bounded like rtload's own reader), as booleans, or None each."""
    path = os.path.join(dest, "summary.json")
    out = {"degraded": None, "stopped": None}
    try:
        st = os.lstat(path)
        if not stat.S_ISREG(st.st_mode) or st.st_size > 256 << 20:
            return out
        with open(path, "rb") as f:
            doc = json.load(f)
    except (OSError, ValueError):
        return out
    if isinstance(doc, dict):
        for k in out:
            if isinstance(doc.get(k), bool):
                out[k] = doc[k]
    return out


def check_tree(module):
    p = module.params
    top = p["src"]
    if not top:
        module.fail_json(msg="action=check_tree needs src")
    try:
        st = os.stat(top)  # the operator's own path: a link to a directory is followed here, and only here
    except OSError as e:
        module.fail_json(msg="%s: %s" % (top, e.strerror), rtload_state="invalid")
    if not stat.S_ISDIR(st.st_mode):
        module.fail_json(msg="%s is not a directory" % top, rtload_state="invalid")
    bounds = Bounds(p["max_bytes"], p["max_members"])
    problems, entries = [], []
    top = os.path.realpath(top)
    for root, dirs, files in os.walk(top, followlinks=False):
        for name in sorted(dirs + files):
            path = os.path.join(root, name)
            rel = os.path.relpath(path, top)
            try:
                if BAD_CHARS.search(rel):
                    raise Refused("%s: the name holds control characters" % shown(rel))
                if rel.count("/") >= MAX_DEPTH:
                    raise Refused("%s: deeper than %d directories" % (shown(rel), MAX_DEPTH))
                lst = os.lstat(path)
                if stat.S_ISLNK(lst.st_mode):
                    raise Refused("%s: a symbolic link" % shown(rel))
                if stat.S_ISREG(lst.st_mode):
                    bounds.add(rel, lst.st_size)
                    entries.append((rel, False))
                elif stat.S_ISDIR(lst.st_mode):
                    bounds.add(rel, 0)
                    entries.append((rel, True))
                else:
                    raise Refused("%s: %s" % (shown(rel), "a FIFO" if stat.S_ISFIFO(lst.st_mode) else "not a regular file or directory"))
            except Refused as e:
                problems.append(e.args[0])
            except OSError as e:
                problems.append("%s: %s" % (shown(rel), e.strerror))
            if len(problems) >= MAX_PROBLEMS or bounds.members > bounds.max_members:
                break
        if len(problems) >= MAX_PROBLEMS or bounds.members > bounds.max_members:
            break
    if problems:
        module.fail_json(msg="%s refused, nothing copied: %s (a results directory holds only directories and regular files)"
                         % (top, "; ".join(problems)), rtload_state="invalid", problems=problems)
    if p["dest"]:
        pack_tree(module, top, entries, p["dest"], p["top_name"] or os.path.basename(top))
    module.exit_json(changed=bool(p["dest"]), path=top, dest=p["dest"], files=bounds.members, bytes=bounds.bytes)


def pack_tree(module, top, entries, dest, name):
    """Writes the checked entries of top as a new .tar.gz dest under name/: directories 0755, files 0644, owned by root.

    Each file is opened with O_NOFOLLOW and must still be the regular file
    the walk saw; anything else fails the module and removes dest.
    """
    if not HOST_LABEL.fullmatch(name) or ".." in name:
        module.fail_json(msg="top_name %s: not a plain name" % shown(name))

    def info(rel, isdir, size=0, mtime=0):
        ti = tarfile.TarInfo(name if rel == "." else name + "/" + rel)
        ti.type = tarfile.DIRTYPE if isdir else tarfile.REGTYPE
        ti.mode, ti.size, ti.mtime = (0o755 if isdir else 0o644), size, mtime
        ti.uid = ti.gid = 0
        ti.uname = ti.gname = "root"
        return ti

    try:
        with open(dest, "xb") as raw, tarfile.open(fileobj=raw, mode="w:gz") as tf:
            tf.addfile(info(".", True))
            for rel, isdir in entries:
                if isdir:
                    tf.addfile(info(rel, True))
                    continue
                fd = os.open(os.path.join(top, rel), os.O_RDONLY | os.O_NOFOLLOW | getattr(os, "O_CLOEXEC", 0))
                with os.fdopen(fd, "rb") as f:
                    st = os.fstat(fd)
                    if not stat.S_ISREG(st.st_mode):
                        raise OSError("%s changed into something other than a regular file" % rel)
                    tf.addfile(info(rel, False, st.st_size, int(st.st_mtime)), f)
    except (OSError, tarfile.TarError) as e:
        if os.path.lexists(dest) and os.path.isfile(dest) and not os.path.islink(dest):
            os.unlink(dest)
        module.fail_json(msg="pack %s as %s: %s" % (top, dest, e))


def write(module):
    p = module.params
    fleet, files = p["fleet_dir"], p["files"] or []
    if not fleet:
        module.fail_json(msg="action=write needs fleet_dir")
    written = []
    for f in files:
        name, content = f.get("name") or "", f.get("content")
        parts = name.split("/")
        if len(parts) > 2 or not all(HOST_LABEL.fullmatch(c) and ".." not in c for c in parts) or not isinstance(content, str):
            module.fail_json(msg="write %s: not one or two plain names under the fleet directory, with content" % shown(name))
        d = fleet
        for c in parts[:-1]:
            d = os.path.join(d, c)
            try:
                os.mkdir(d, 0o755)
            except FileExistsError:
                pass
            if not stat.S_ISDIR(os.lstat(d).st_mode):
                module.fail_json(msg="%s is not a directory" % d)
        path = os.path.join(d, parts[-1])
        fd, tmp = tempfile.mkstemp(prefix="." + parts[-1] + ".", dir=d)
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as out:
                out.write(content)
                os.fchmod(out.fileno(), 0o644)
            os.rename(tmp, path)
        except BaseException:
            os.unlink(tmp)
            raise
        written.append(path)
    removed = []
    top = os.path.realpath(fleet) + os.sep
    for path in p["remove"] or []:
        if not os.path.realpath(os.path.dirname(path)).startswith(top) or not os.path.isfile(path) or os.path.islink(path):
            continue  # only the role's own files in the fleet directory
        os.unlink(path)
        removed.append(path)
    module.exit_json(changed=bool(written or removed), written=written, removed=removed)


def main():
    module = AnsibleModule(
        argument_spec=dict(
            action=dict(type="str", required=True, choices=["label", "unpack", "check_tree", "write"]),
            host=dict(type="str"),
            kernel=dict(type="str"),
            fleet_dir=dict(type="path"),
            src=dict(type="path"),
            dest=dict(type="path"),
            max_bytes=dict(type="int", default=16 << 30),
            max_members=dict(type="int", default=100000),
            remove_src=dict(type="bool", default=True),
            files=dict(type="list", elements="dict"),
            remove=dict(type="list", elements="path"),
            top_name=dict(type="str"),
        ),
        supports_check_mode=True,
    )
    action = module.params["action"]
    if action == "label":
        label(module)
    elif action == "check_tree" and not module.params["dest"]:
        check_tree(module)
    elif module.check_mode:
        module.exit_json(changed=action == "unpack", msg="check mode: nothing done")
    elif action == "unpack":
        unpack(module)
    elif action == "write":
        write(module)
    else:
        check_tree(module)


if __name__ == "__main__":
    main()
