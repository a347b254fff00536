"""Passwords and tokens given to a command on its command line; :mod:`.rules` runs these after the format rules.

A password flag means a password only for the commands that read it so:
``-p`` is a port to ``ssh`` and ``psql`` but the password to ``mongosh``
and ``az login``, ``-P`` the password to ``sqlcmd`` and ``zip``, and the
word after ``vault login`` is a token.  So each rule names its commands
(found with :func:`.at_commands`, one try per line); single-dash Java and
PowerShell style flags (``-storepass``, ``-keypass``, ``-pw``,
``-Password``) mean a secret whatever the command.
A value that reads as prose, a path or a reference stays
(:func:`.mask_flag_value`), as do openssl's ``env:``/``file:`` sources.
"""

from __future__ import annotations

import re

from .formats import mask_flag_value
from .match import Rule, at_commands, at_lowered_words, at_words, in_lowered, in_text, mask_group, prefiltered

__all__ = ["COMMAND_RULES"]

# A flag's value: not a flag, an option list, a substitution or a redirect.
_VALUE = r"(['\"]?)(?P<secret>[^\s'\"<>|&;$`(){}-][^\s'\"]*)\1"
_PASSWORD_P = r"\b(?:sqlcmd|osql|bcp|zip|unzip|mongo|mongosh|mongodump|mongorestore|mongoexport|mongoimport|az login)\b"
_PASSWORD_P_WORDS = ("sqlcmd", "osql", "bcp", "zip", "mongo", "az login")

COMMAND_RULES: tuple[Rule, ...] = (
    # sqlcmd -P <pw>, zip/unzip -P <pw>, mongosh -p <pw>, az login -u <user> -p <pw>.
    Rule(
        re.compile(_PASSWORD_P + r"[^\n]*?[ \t]-[pP][ \t]+" + _VALUE),
        mask_flag_value,
        in_text(any_of=("-p", "-P")),
        at_commands(_PASSWORD_P, *_PASSWORD_P_WORDS),
    ),
    # 7-Zip takes the password joined to its flag: 7z a -p<pw> out.7z.
    Rule(
        re.compile(r"\b7z[ar]?\b[^\n]*?[ \t]-p(['\"]?)(?P<secret>[^\s'\"]+)\1"),
        mask_group,
        in_text("7z", "-p"),
        at_commands(r"\b7z[ar]?\b", "7z"),
    ),
    # htpasswd -b[c] <file> <user> <pw> (batch mode: the password is an argument).
    Rule(
        re.compile(
            r"\bhtpasswd\b[ \t]+(?:-[A-Za-z]+[ \t]+)*?-[A-Za-z]*b[A-Za-z]*[ \t]+(?:-[A-Za-z]+[ \t]+)*"
            r"[^\s-]\S*[ \t]+\S+[ \t]+" + _VALUE
        ),
        mask_group,
        in_text("htpasswd", "-"),
        at_commands(r"\bhtpasswd\b", "htpasswd"),
    ),
    # rabbitmqctl add_user <name> <pw> / change_password <name> <pw>.
    Rule(
        re.compile(r"\brabbitmqctl\b[ \t]+(?:add_user|change_password)[ \t]+\S+[ \t]+" + _VALUE),
        mask_group,
        in_text("rabbitmqctl"),
        at_words("rabbitmqctl"),
    ),
    # smbclient / rpcclient / smbmap -U user%password, lftp -u user,password.
    Rule(
        re.compile(
            r"\b(?:smbclient|rpcclient|smbmap|smbget)\b[^\n]*?[ \t](?:-U|--user(?:name)?)(?:[ \t]+|=)(['\"]?)"
            r"[^\s%'\"]+%(?P<secret>[^\s'\"]+)\1"
        ),
        mask_group,
        in_text("%", any_of=("smb", "rpcclient")),
        at_commands(r"\b(?:smbclient|rpcclient|smbmap|smbget)\b", "smb", "rpcclient"),
    ),
    Rule(
        re.compile(r"\blftp\b[^\n]*?[ \t]-u[ \t]+(['\"]?)[^\s,'\"]+,(?P<secret>[^\s'\"]+)\1"),
        mask_group,
        in_text("lftp", ","),
        at_commands(r"\blftp\b", "lftp"),
    ),
    # vault login <token> (a flag or key=value after login is another form).
    Rule(
        re.compile(
            r"\bvault[ \t]+login[ \t]+(?P<secret>[^\s'\"=<>|&;$`(){}-][^\s'\"=]*)(?=[ \t]*(?:$|\r?\n|[;&|'\"\\]))"
        ),
        mask_flag_value,
        in_text("vault", "login"),
        at_commands(r"\bvault[ \t]+login\b", "vault"),
    ),
    # openssl enc -k <password> (-kfile names a file).
    Rule(
        re.compile(r"\bopenssl\b[^\n]*?[ \t]-k[ \t]+" + _VALUE),
        mask_flag_value,
        in_text("openssl", "-k"),
        at_commands(r"\bopenssl\b", "openssl"),
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
