"""Passwords and tokens given to a command on its command line; :mod:`.rules` runs these after the format rules.

A password flag means a password only for the commands that read it so:
``-p`` is a port to ``ssh`` and ``psql`` but the password to ``mongosh``
and ``az login``, ``-P`` the password to ``sqlcmd`` and ``zip``, and the
word after ``vault login`` is a token.  So each rule names its commands
(:func:`.command_rule`: found with :func:`.at_commands`, one try per
line); single-dash Java and PowerShell style flags (``-storepass``,
``-keypass``, ``-pw``, ``-Password``) mean a secret whatever the command.
A value that reads as prose, a path or a reference stays
(:func:`.mask_flag_value`), as do openssl's ``env:``/``file:`` sources.
"""

from __future__ import annotations

import re

from .formats import mask_flag_value
from .match import Rule, at_lowered_words, at_words, command_rule, in_lowered, in_text, prefiltered
from .replacements import mask_group

__all__ = ["COMMAND_RULES"]

# A flag's value: not a flag, an option list, a substitution or a redirect.
_VALUE = r"(['\"]?)(?P<secret>[^\s'\"<>|&;$`(){}-][^\s'\"]*)\1"
_PASSWORD_P = r"\b(?:sqlcmd|osql|bcp|zip|unzip|mongo|mongosh|mongodump|mongorestore|mongoexport|mongoimport|az login)\b"
_PASSWORD_P_WORDS = ("sqlcmd", "osql", "bcp", "zip", "mongo", "az login")

COMMAND_RULES: tuple[Rule, ...] = (
    # sqlcmd -P <pw>, zip/unzip -P <pw>, mongosh -p <pw>, az login -u <user> -p <pw>.
    command_rule(
        _PASSWORD_P,
        r"[^\n]*?[ \t]-[pP][ \t]+" + _VALUE,
        mask_flag_value,
        in_text(any_of=("-p", "-P")),
        *_PASSWORD_P_WORDS,
    ),
    # 7-Zip takes the password joined to its flag: 7z a -p<pw> out.7z.
    command_rule(
        r"\b7z[ar]?\b", r"[^\n]*?[ \t]-p(['\"]?)(?P<secret>[^\s'\"]+)\1", mask_group, in_text("7z", "-p"), "7z"
    ),
    # htpasswd -b[c] <file> <user> <pw> (batch mode: the password is an argument).
    command_rule(
        r"\bhtpasswd\b",
        r"[ \t]+(?:-[A-Za-z]+[ \t]+)*?-[A-Za-z]*b[A-Za-z]*[ \t]+(?:-[A-Za-z]+[ \t]+)*[^\s-]\S*[ \t]+\S+[ \t]+" + _VALUE,
        mask_group,
        in_text("htpasswd", "-"),
        "htpasswd",
    ),
    # rabbitmqctl add_user <name> <pw> / change_password <name> <pw>.
    Rule(
        re.compile(r"\brabbitmqctl\b[ \t]+(?:add_user|change_password)[ \t]+\S+[ \t]+" + _VALUE),
        mask_group,
        in_text("rabbitmqctl"),
        at_words("rabbitmqctl"),
    ),
    # smbclient / rpcclient / smbmap -U user%password, lftp -u user,password.
    command_rule(
        r"\b(?:smbclient|rpcclient|smbmap|smbget)\b",
        r"[^\n]*?[ \t](?:-U|--user(?:name)?)(?:[ \t]+|=)(['\"]?)[^\s%'\"]+%(?P<secret>[^\s'\"]+)\1",
        mask_group,
        in_text("%", any_of=("smb", "rpcclient")),
        "smb",
        "rpcclient",
    ),
    command_rule(
        r"\blftp\b",
        r"[^\n]*?[ \t]-u[ \t]+(['\"]?)[^\s,'\"]+,(?P<secret>[^\s'\"]+)\1",
        mask_group,
        in_text("lftp", ","),
        "lftp",
    ),
    # vault login <token> (a flag or key=value after login is another form).
    # (the \b after "login" holds wherever [ \t]+ follows it: the same matches as without it)
    command_rule(
        r"\bvault[ \t]+login\b",
        r"[ \t]+(?P<secret>[^\s'\"=<>|&;$`(){}-][^\s'\"=]*)(?=[ \t]*(?:$|\r?\n|[;&|'\"\\]))",
        mask_flag_value,
        in_text("vault", "login"),
        "vault",
    ),
    # openssl enc -k <password> (-kfile names a file).
    command_rule(
        r"\bopenssl\b", r"[^\n]*?[ \t]-k[ \t]+" + _VALUE, mask_flag_value, in_text("openssl", "-k"), "openssl"
    ),
    # keytool/jarsigner -storepass and -keypass, PuTTY's -pw, PowerShell -Password, -passphrase (any command).
    Rule(
        re.compile(
            r"(?i)(?<![\w-])-(?:(?:src|dest|new)?(?:storepass|keypass)|pw|password|passwd|passphrase)"
            r"(?:[ \t]+|=|:)(?!(?:file|fd|pass|env):)" + _VALUE
        ),
        mask_flag_value,
        in_lowered("pass", "-pw", text_requires=("-",)),
        # one scan of the folded text for the flags (a literal "-" lets re skip ahead), not one per flag
        prefiltered(r"-(?:(?:src|dest|new)?(?:storepass|keypass)|pw|password|passwd|passphrase)"),
    ),
    # PowerShell: ConvertTo-SecureString "<password>" -AsPlainText.
    Rule(
        re.compile(r"(?i)ConvertTo-SecureString(?:[ \t]+-String)?[ \t]+(['\"])(?P<secret>[^'\"\r\n]+)\1"),
        mask_group,
        in_lowered("convertto-securestring"),
        at_lowered_words("convertto-securestring"),
    ),
)
