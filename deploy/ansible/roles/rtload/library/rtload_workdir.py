#!/usr/bin/python3
# -*- coding: utf-8 -*-
# rtload role: a directory on a host that no other local user can have made
# or can change (issue 23). Runs on the host, as the user rtload runs as
# (root, or through become); stdlib only, Python 3.6+.

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
module: rtload_workdir
short_description: Create, or accept, directories only the user rtload runs as can change
description:
  - Every existing component of I(path) from C(/) down must be owned by root or by the
    user the module runs as, and must not be writable by others (a sticky directory such
    as /tmp or /var/tmp is accepted as a parent: nobody else can replace an entry there
    that is not theirs). A symbolic link on the way must be owned by root (or that
    user); where it leads is checked by the same rule.
  - I(path) itself is created with mkdir(2) (which fails if anything is there), or, when
    it exists, must be a directory (not a link) owned by this user and not writable by
    others. With I(exact_mode) its mode is then set to I(mode) through its descriptor.
  - A local user who made the directory first (in /var/tmp, say) is refused, naming the
    owner and the mode; the module fails with C(rtload_state=rejected).
  - I(dirs) are done in order, each as I(path) above; the first refusal stops the module.
options:
  dirs:
    type: list
    elements: dict
    required: true
    description:
      - Each C(path) (absolute, normalised), C(mode) (of a new directory, and with
        C(exact_mode), default true, of an existing one; default "0700") and C(what)
        (the variable it comes from, for messages, e.g. rtload_remote_dir).
"""

import os
import pwd
import stat

from ansible.module_utils.basic import AnsibleModule


def owner(uid):
    try:
        return "uid %d (%s)" % (uid, pwd.getpwuid(uid).pw_name)
    except KeyError:
        return "uid %d" % uid


def others_can_write(st):
    """True when a user other than the owner (and root) can create, remove or rename entries in, or write, st."""
    m = st.st_mode
    return bool(m & stat.S_IWOTH) or bool(m & stat.S_IWGRP and st.st_gid != 0)


class Unsafe(Exception):
    pass


def check_chain(path, euid, links=0):
    """Checks every existing component of the absolute path from / down.

    A symbolic link must be owned by root or euid; the walk then goes on
    from where it points, with the rest of the path. Components are never
    normalised away: ".." is taken from a prefix made of real directories.
    """
    parts = [c for c in path.split("/") if c and c != "."]
    cur = "/"
    for i, c in enumerate(parts):
        if c == "..":
            cur = os.path.dirname(cur)
            continue
        nxt = os.path.join(cur, c)
        try:
            st = os.lstat(nxt)
        except FileNotFoundError:
            return  # the rest is ours to create
        if st.st_uid not in (0, euid):
            raise Unsafe("%s is owned by %s" % (nxt, owner(st.st_uid)))
        if stat.S_ISLNK(st.st_mode):
            if links >= 40:
                raise Unsafe("%s: too many symbolic links" % nxt)
            target = os.readlink(nxt)
            check_chain(os.path.join(cur, target, *parts[i + 1:]), euid, links + 1)  # an absolute target restarts the join
            return
        if not stat.S_ISDIR(st.st_mode):
            raise Unsafe("%s is not a directory" % nxt)
        if others_can_write(st) and not st.st_mode & stat.S_ISVTX:
            raise Unsafe("%s is writable by others (mode %04o, not sticky)" % (nxt, stat.S_IMODE(st.st_mode)))
        cur = nxt


def claim(d, euid, check_mode):
    """Checks, or creates, the directory d (a dict of path, mode, exact_mode, what); returns whether it changed. Raises Unsafe or Invalid."""
    path, what = d["path"], d.get("what") or "directory"
    mode = d.get("mode", "0700")
    mode = int(str(mode), 8) if not isinstance(mode, int) else mode
    if not isinstance(path, str) or not os.path.isabs(path) or os.path.normpath(path) != path.rstrip("/") or path == "/":
        raise Invalid("%s %s: not an absolute, normalised path below /" % (what, path))
    path = os.path.normpath(path)
    check_chain(os.path.dirname(path), euid)
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        st = None
    if st is None:
        if not check_mode:
            os.mkdir(path, mode)  # EEXIST if anyone got there first: refused on the next run
            fd = os.open(path, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW)
            try:
                os.fchmod(fd, mode)  # mkdir's mode went through the umask
            finally:
                os.close(fd)
        return True
    if stat.S_ISLNK(st.st_mode):
        raise Unsafe("%s is a symbolic link" % path)
    if not stat.S_ISDIR(st.st_mode):
        raise Unsafe("%s is not a directory" % path)
    fd = os.open(path, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW)
    try:
        st = os.fstat(fd)
        if st.st_uid != euid:
            raise Unsafe("%s is owned by %s, not by %s, which rtload runs as: another local user may have made it first"
                         % (path, owner(st.st_uid), owner(euid)))
        if others_can_write(st):
            raise Unsafe("%s is writable by others (mode %04o)" % (path, stat.S_IMODE(st.st_mode)))
        changed = bool(d.get("exact_mode", True)) and stat.S_IMODE(st.st_mode) != mode
        if changed and not check_mode:
            os.fchmod(fd, mode)
    finally:
        os.close(fd)
    return changed


class Invalid(Exception):
    pass


def main():
    module = AnsibleModule(
        argument_spec=dict(dirs=dict(type="list", elements="dict", required=True)),
        supports_check_mode=True,
    )
    euid = os.geteuid()
    changed = []
    for d in module.params["dirs"]:
        what, path = d.get("what") or "directory", d.get("path")
        fix = ("give %s a new directory under a root-owned parent (the default is /var/lib/rtload), "
               "or remove %s after checking what it holds" % (what, path))
        try:
            if claim(d, euid, module.check_mode):
                changed.append(path)
        except Invalid as e:
            module.fail_json(msg=e.args[0], rtload_state="invalid")
        except Unsafe as e:
            module.fail_json(msg="%s %s refused: %s; nothing was written there (%s)" % (what, path, e.args[0], fix), rtload_state="rejected")
        except OSError as e:
            module.fail_json(msg="%s %s: %s" % (what, path, e))
    module.exit_json(changed=bool(changed), changed_dirs=changed)


if __name__ == "__main__":
    main()
