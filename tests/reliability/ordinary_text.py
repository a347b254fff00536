"""Ordinary text that must pass redaction unchanged: more than 500 lines of what a coding session shows.

Git logs, Kubernetes and CI YAML (``id-token: write``,
``automountServiceAccountToken: false``), Python with ``token``, ``sk_`` and
``am_`` names, prose ("basic troubleshooting"), URLs, base64 images,
package-manager output, hashes, UUIDs and commit SHAs.  Hashes and UUIDs
are drawn from a seeded random source: they look as random as secrets do,
which is the point.
"""

# ruff: noqa: E501
# (a corpus: lines as they appear in terminals and files)

from __future__ import annotations

import base64
import random

HEX = "0123456789abcdef"


def _blocks(seed: int = 31) -> list[str]:
    rng = random.Random(seed)

    def h(n: int) -> str:
        return "".join(rng.choice(HEX) for _ in range(n))

    def uuid() -> str:
        return "-".join(h(k) for k in (8, 4, 4, 4, 12))

    def b64(n: int) -> str:
        return base64.b64encode(bytes(rng.randrange(256) for _ in range(n))).decode()

    blocks: list[str] = []

    # git output
    for i in range(12):
        blocks.append(
            f"commit {h(40)}\nAuthor: Dev {i} <dev{i}@example.com>\nDate:   Mon Nov {i + 1} 10:{i:02d}:00 2026 +0000\n\n"
            f"    fix: handle the token budget in request {i}\n"
        )
    blocks.append("\n".join(f"{h(7)} (HEAD -> main) feat: secret scanning docs, part {i}" for i in range(10)))
    blocks.append(
        f"diff --git a/auth.py b/auth.py\nindex {h(7)}..{h(7)} 100644\n--- a/auth.py\n+++ b/auth.py\n"
        "@@ -10,7 +10,7 @@ def login(user, password):\n-    token = issue(user)\n+    token = issue(user, ttl=3600)\n"
        "     return token"
    )
    blocks.append(f"Merge: {h(7)} {h(7)}\nMerge pull request #42 from org/fix-token-refresh")
    blocks.append(f"[main {h(7)}] Rotate the key loading code\n 3 files changed, 41 insertions(+), 7 deletions(-)")
    blocks.append("Switched to branch 'feature/api-key-rotation'\nYour branch is up to date with 'origin/main'.")
    blocks.append(
        f"remote: Resolving deltas: 100% (12/12), done.\nTo github.com:org/repo.git\n   {h(7)}..{h(7)}  main -> main"
    )
    blocks.append(f"git tag -s v1.4.0 -m 'release'\ngit show-ref refs/tags/v1.4.0\n{h(40)} refs/tags/v1.4.0")

    # Kubernetes YAML
    blocks.append(
        "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: api\n  labels:\n    app: api\nspec:\n  replicas: 3\n"
        "  template:\n    spec:\n      automountServiceAccountToken: false\n      serviceAccountName: api\n"
        "      containers:\n        - name: api\n          image: ghcr.io/org/api:1.4.2\n          env:\n"
        "            - name: LOG_LEVEL\n              value: info\n            - name: DB_PASSWORD\n"
        "              valueFrom:\n                secretKeyRef:\n                  name: db-credentials\n"
        '                  key: password\n            - name: TOKEN_TTL\n              value: "3600"\n'
        "          ports:\n            - containerPort: 8080"
    )
    blocks.append(
        "apiVersion: v1\nkind: ServiceAccount\nmetadata:\n  name: builder\nautomountServiceAccountToken: true\n"
        "secrets:\n  - name: builder-token"
    )
    blocks.append(
        "apiVersion: v1\nkind: Secret\nmetadata:\n  name: tls\ntype: kubernetes.io/tls\nstringData:\n"
        "  tls.crt: |\n    -----BEGIN CERTIFICATE-----\n    MIIBszCCAVmgAwIBAgIUFAKE\n    -----END CERTIFICATE-----"
    )
    blocks.append(
        "apiVersion: v1\nkind: Pod\nspec:\n  volumes:\n    - name: token\n      projected:\n        sources:\n"
        "          - serviceAccountToken:\n              path: token\n              expirationSeconds: 3600\n"
        "              audience: vault"
    )
    blocks.append(
        "NAME                      READY   STATUS    RESTARTS   AGE\n"
        + "\n".join(f"api-{h(10)}-{h(5)}   1/1     Running   0          {i}d" for i in range(1, 8))
    )
    blocks.append(
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: settings\ndata:\n  auth_mode: oauth\n"
        "  token_endpoint: https://auth.example.com/oauth/token\n  secret_store: vault\n  password_policy: strong\n"
        '  api_version: "2023-06-01"'
    )
    blocks.append(
        'apiVersion: rbac.authorization.k8s.io/v1\nkind: Role\nrules:\n  - apiGroups: [""]\n'
        '    resources: ["secrets", "serviceaccounts/token"]\n    verbs: ["get", "create"]'
    )
    blocks.append(
        "apiVersion: external-secrets.io/v1beta1\nkind: ExternalSecret\nspec:\n  secretStoreRef:\n"
        "    name: vault-backend\n  data:\n    - secretKey: password\n      remoteRef:\n        key: db/prod\n"
        "        property: password"
    )

    # CI YAML
    blocks.append(
        "name: release\non:\n  push:\n    tags: ['v*']\npermissions:\n  contents: read\n  id-token: write\n"
        "  packages: write\n  pull-requests: read\njobs:\n  publish:\n    runs-on: ubuntu-latest\n"
        "    environment: pypi\n    permissions:\n      id-token: write\n      attestations: write\n"
        "    steps:\n      - uses: actions/checkout@v4\n        with:\n          persist-credentials: false\n"
        "      - uses: actions/setup-python@v5\n        with:\n          python-version: '3.12'\n"
        "      - run: python -m build\n      - uses: pypa/gh-action-pypi-publish@release/v1\n"
        "        with:\n          password: ${{ secrets.PYPI_API_TOKEN }}\n"
        "      - uses: actions/cache@v4\n        with:\n          path: ~/.cache/pip\n"
        "          key: ${{ runner.os }}-pip-${{ hashFiles('**/requirements.txt') }}\n"
        "      - env:\n          GITHUB_TOKEN: ${{ secrets.GITHUB_TOKEN }}\n          NPM_TOKEN: ${{ secrets.NPM_TOKEN }}\n"
        "        run: npm publish"
    )
    blocks.append(
        f"Run actions/cache@v4\nCache restored from key: Linux-pip-{h(64)}\n"
        f"Received 1234567 of 1234567 (100.0%), 2.1 MBs/sec\nCache Size: ~1 MB (1234567 B)"
    )
    blocks.append(
        'stages: [test, deploy]\nvariables:\n  GIT_DEPTH: "10"\n  DOCKER_TLS_CERTDIR: "/certs"\ntest:\n'
        "  image: python:3.12\n  script:\n    - pip install -e .[test]\n    - pytest -q\ndeploy:\n"
        '  script:\n    - echo "$CI_JOB_TOKEN" | docker login -u gitlab-ci-token --password-stdin $CI_REGISTRY\n'
        "  id_tokens:\n    VAULT_ID_TOKEN:\n      aud: https://vault.example.com"
    )
    blocks.append(
        "version: 2.1\norbs:\n  python: circleci/python@2.1\njobs:\n  build:\n    docker:\n      - image: cimg/python:3.12\n"
        "        auth:\n          username: mydockerhub-user\n          password: $DOCKERHUB_PASSWORD"
    )

    # docker compose, terraform, ansible
    blocks.append(
        "services:\n  db:\n    image: postgres:16\n    environment:\n      POSTGRES_PASSWORD_FILE: /run/secrets/db_password\n"
        "      POSTGRES_USER: app\n    secrets:\n      - db_password\nsecrets:\n  db_password:\n    file: ./db_password.txt"
    )
    blocks.append(
        'variable "db_password" {\n  type      = string\n  sensitive = true\n}\n\nresource "aws_db_instance" "db" {\n'
        '  password = var.db_password\n  username = "app"\n  kms_key_id = aws_kms_key.db.arn\n}'
    )
    blocks.append(
        '- name: create user\n  community.postgresql.postgresql_user:\n    name: app\n    password: "{{ vault_db_password }}"\n'
        "  no_log: true"
    )

    # Python
    blocks.append(
        "import os\nfrom sklearn.linear_model import LogisticRegression\n\n"
        "sk_learn_model = LogisticRegression(max_iter=1000)\nsk_model_path = 'models/sk_regressor_v2.pkl'\n"
        "am_pm_format = '%I:%M %p'\nam_start_hour = 9\nsk_feature_names = ['age', 'income']\n"
        "tokens = tokenizer.encode(text)\nfor token in tokens:\n    counts[token] += 1\n"
        "token = tokens[0]\nnext_token = stream.peek()\npassword = getpass.getpass('Password: ')\n"
        "api_key = os.environ['OPENAI_API_KEY']\napi_key = os.getenv('OPENAI_API_KEY')\n"
        "self.token_budget = 4000\nsecret_name = 'prod/db'\naccess_token = response.json()['access_token']\n"
        "password = new_password\ntoken = self.token\nsecret = settings.SECRET_KEY\n"
        "headers = {'Authorization': f'Bearer {token}'}\n"
        "def refresh_token(self) -> str:\n    return self._client.refresh(self.refresh_token_value)\n"
        "if not password:\n    raise ValueError('password: required')\n"
        "MAX_TOKENS = 4096\nTOKEN_LIMIT = 8192\nAPI_KEY_ENV = 'OPENAI_API_KEY'\nPASSWORD_MIN_LENGTH = 12\n"
        "assert sk_learn_model is not None\nam_i_done = False"
    )
    blocks.append(
        "class TokenBucket:\n    def __init__(self, rate: float, capacity: int) -> None:\n        self.tokens = capacity\n"
        "    def take(self, n: int = 1) -> bool:\n        if self.tokens >= n:\n            self.tokens -= n\n"
        "            return True\n        return False"
    )
    blocks.append(
        "def hash_password(password: str, salt: bytes) -> bytes:\n"
        "    return hashlib.pbkdf2_hmac('sha256', password.encode(), salt, 600_000)\n\n"
        "def verify(password, hashed):\n    return hmac.compare_digest(hash_password(password, SALT), hashed)"
    )
    blocks.append(
        "parser.add_argument('--token', help='API token (or set API_TOKEN)')\n"
        "parser.add_argument('--password-file', type=Path)\nparser.add_argument('--max-tokens', type=int, default=512)\n"
        "args = parser.parse_args(['--max-tokens', '256'])"
    )
    blocks.append(
        "const token = localStorage.getItem('token');\nconst apiKey = process.env.API_KEY;\n"
        "export function useAuth() { const [token, setToken] = useState(null); return { token, setToken }; }\n"
        "const password = form.password.value;\nif (!apiKey) throw new Error('api key missing');"
    )
    blocks.append(
        'func (c *Client) Token() string { return c.token }\npassword := os.Getenv("DB_PASSWORD")\n'
        'token, err := c.auth.Token(ctx)\nif err != nil { return fmt.Errorf("token: %w", err) }'
    )

    # prose
    prose = [
        "For basic troubleshooting, restart the service and check the logs.",
        "Basic authentication is disabled; use OAuth instead.",
        "Token limits apply per request: the secret is to keep prompts short.",
        "The password reset flow sends a link that expires after one hour.",
        "Bearer tokens are passed in the Authorization header by the SDK.",
        "I rotated the API key yesterday and updated the secret store.",
        "The private key never leaves the HSM; only the public key is exported.",
        "Set the token expiry to 3600 seconds and the refresh window to 300.",
        "Each access key has a key ID and a secret; store only the ID in logs.",
        "Token authentication failed because the clock skew was over five minutes.",
        "Our secret sauce is caching: compaction keeps the newest request.",
        "The basic plan includes five seats and email support.",
        "Use the password manager for the shared credentials, never chat.",
        "The session token is scoped to read-only operations.",
        "Pass --token to the CLI, or export the variable first.",
        "Keys are rotated every 90 days by the security team.",
        "Signed URLs expire after 15 minutes by default.",
        "The model counts tokens with o200k_base; the budget is 200k tokens.",
        "A JWT has three parts: header, payload and signature.",
        "Private Key Infrastructure (PKI) issues the certificates.",
        "The secret manager stores the DB password; the app reads it at start.",
        "Credentials expire; rerun aws sso login to refresh them.",
        "password: must be at least 12 characters",
        "token: expired",
        "The basic idea: spill large outputs and keep handles in the context.",
        "I asked for a token count and got 4,096 tokens.",
        "Basic troubleshooting steps are listed in the runbook.",
        "Bearer of bad news: the build is red again.",
        "This key insight changed the design.",
        "Authorization is handled by the gateway, authentication by the IdP.",
    ]
    blocks.append("\n".join(prose))

    # URLs
    urls = [
        "https://github.com/org/repo/pull/1234",
        "https://docs.python.org/3/library/secrets.html#secrets.token_hex",
        "https://example.com/search?q=token+limits&page=2&sort=desc",
        "https://api.example.com/v1/users?limit=50&offset=100",
        "https://accounts.google.com/o/oauth2/v2/auth?client_id=123.apps.googleusercontent.com&response_type=code",
        "https://oauth2.googleapis.com/token",
        "https://registry.npmjs.org/left-pad/-/left-pad-1.3.0.tgz",
        "https://files.pythonhosted.org/packages/ab/cd/requests-2.32.3-py3-none-any.whl",
        "https://www.youtube.com/watch?v=dQw4w9WgXcQ&t=42s",
        "https://storage.googleapis.com/bucket/path/to/object.png",
        "https://bucket.s3.amazonaws.com/reports/2026/11/summary.pdf",
        "https://learn.microsoft.com/en-us/azure/storage/common/storage-sas-overview",
        "https://en.wikipedia.org/wiki/Basic_access_authentication",
        "https://example.com/reset-password?step=2",
        "https://example.com/api/keys?page=3",
        "http://localhost:8080/health",
        "redis://cache.internal:6379/0",
        "postgres://db.internal:5432/app",
        "git@github.com:org/repo.git",
        "ssh://git@gitlab.com/org/repo.git",
        "https://user@example.com/repo.git",
        "mailto:security@example.com",
        f"https://ci.example.com/job/build/{rng.randrange(10**6)}/console",
        "https://pkg.go.dev/golang.org/x/oauth2#Token",
        "https://jwt.io/introduction",
    ]
    blocks.append("\n".join(urls))
    blocks.append("\n".join(f"https://github.com/org/repo/commit/{h(40)}" for _ in range(10)))

    # base64 images and data
    blocks.append(f"![chart](data:image/png;base64,{b64(600)})")
    blocks.append(f'<img src="data:image/jpeg;base64,{b64(900)}" alt="screenshot">')
    blocks.append(f'{{"type": "image_url", "image_url": {{"url": "data:image/png;base64,{b64(300)}"}}}}')
    blocks.append(f"font: url(data:font/woff2;base64,{b64(400)}) format('woff2');")
    blocks.append(f"tls.crt: {base64.b64encode(b'-----BEGIN CERTIFICATE-----' + bytes(60)).decode()}")
    blocks.append(f"ca.crt: {base64.b64encode(b'-----BEGIN CERTIFICATE-----' + bytes(60)).decode()}")

    # package managers
    blocks.append(
        "Collecting requests>=2.31\n  Downloading requests-2.32.3-py3-none-any.whl (64 kB)\n"
        "Collecting charset-normalizer<4,>=2\n  Using cached charset_normalizer-3.4.0-cp312-cp312-manylinux.whl (141 kB)\n"
        "Installing collected packages: urllib3, idna, charset-normalizer, certifi, requests\n"
        "Successfully installed certifi-2024.8.30 charset-normalizer-3.4.0 idna-3.10 requests-2.32.3 urllib3-2.2.3"
    )
    blocks.append(
        "added 1342 packages, and audited 1343 packages in 21s\n\n212 packages are looking for funding\n"
        "  run `npm fund` for details\n\n3 moderate severity vulnerabilities\n\nTo address all issues, run:\n"
        "  npm audit fix"
    )
    blocks.append(
        "\n".join(
            f'    "node_modules/pkg-{i}": {{\n      "version": "1.{i}.0",\n'
            f'      "resolved": "https://registry.npmjs.org/pkg-{i}/-/pkg-{i}-1.{i}.0.tgz",\n'
            f'      "integrity": "sha512-{b64(48)}"\n    }},'
            for i in range(8)
        )
    )
    blocks.append(
        "\n".join(
            f"{name}=={v} \\\n    --hash=sha256:{h(64)}"
            for name, v in (("idna", "3.10"), ("certifi", "2024.8.30"), ("urllib3", "2.2.3"))
        )
    )
    blocks.append(
        '[[package]]\nname = "tokenizers"\nversion = "0.20.3"\nsource = { registry = "https://pypi.org/simple" }\n'
        f'wheels = [\n    {{ url = "https://files.pythonhosted.org/t.whl", hash = "sha256:{h(64)}" }},\n]'
    )
    blocks.append(
        "Reading package lists... Done\nBuilding dependency tree... Done\nThe following NEW packages will be installed:\n"
        "  libsecret-1-0 libsecret-common gnupg-agent\n0 upgraded, 3 newly installed, 0 to remove and 12 not upgraded.\n"
        "Get:1 http://deb.debian.org/debian bookworm/main amd64 libsecret-common all 0.20.5-3 [36.4 kB]"
    )
    blocks.append(
        "   Compiling serde v1.0.215\n   Compiling tokio v1.41.1\n   Compiling jsonwebtoken v9.3.0\n"
        "    Finished `release` profile [optimized] target(s) in 1m 02s"
    )
    blocks.append(
        "go: downloading golang.org/x/oauth2 v0.24.0\ngo: downloading github.com/golang-jwt/jwt/v5 v5.2.1\n"
        f"golang.org/x/oauth2 v0.24.0 h1:{b64(32)}\ngolang.org/x/oauth2 v0.24.0/go.mod h1:{b64(32)}"
    )
    blocks.append(
        f"#5 [2/6] RUN pip install -r requirements.txt\n#5 sha256:{h(64)}\n"
        f"#9 writing image sha256:{h(64)} done\n#9 naming to docker.io/org/api:latest done\n"
        f"latest: digest: sha256:{h(64)} size: 2417"
    )

    # hashes, UUIDs, ids
    blocks.append("\n".join(f"{h(64)}  dist/stowage-0.{i}.0-py3-none-any.whl" for i in range(6)))
    blocks.append("\n".join(f"{h(32)}  file{i}.tar.gz" for i in range(6)))
    blocks.append("\n".join(f'{{"id": "{uuid()}", "status": "ok", "request_id": "{uuid()}"}}' for _ in range(8)))
    blocks.append("\n".join(f'trace_id={h(32)} span_id={h(16)} level=info msg="request done"' for _ in range(6)))
    blocks.append("\n".join(f"session_id: {uuid()}\ncorrelation-id: {uuid()}" for _ in range(4)))
    blocks.append(f'ETag: "{h(32)}"\nX-Request-Id: {uuid()}\nContent-Type: application/json\nCache-Control: no-cache')
    blocks.append(
        f"ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAI{b64(24)} dev@laptop\n"
        f"SHA256:{b64(32).rstrip('=')} dev@laptop (ED25519)\nThe key fingerprint is SHA256:{b64(32).rstrip('=')}"
    )
    blocks.append(
        "-----BEGIN PUBLIC KEY-----\nMFkwEwYHKoZIzj0CAQYIKoZIzj0DAQcDQgAEFAKEpublicKEYonly\n-----END PUBLIC KEY-----\n"
        "-----BEGIN CERTIFICATE REQUEST-----\nMIICvDCCAaQCAQAwdzELMAkGA1UEBhMCVVMx\n-----END CERTIFICATE REQUEST-----"
    )
    blocks.append(
        "$ openssl genrsa -out server.key 2048\n$ openssl req -new -key server.key -out server.csr\n"
        "$ chmod 600 ~/.ssh/id_ed25519\n$ ssh-keygen -t ed25519 -C dev@laptop -f ~/.ssh/id_ed25519\n"
        "Your identification has been saved in /home/dev/.ssh/id_ed25519"
    )

    # shell and logs
    blocks.append(
        "$ export PATH=$HOME/.local/bin:$PATH\n$ export HF_HUB_OFFLINE=1\n$ export TOKENIZERS_PARALLELISM=false\n"
        "$ echo $OPENAI_API_KEY | wc -c\n52\n$ env | grep -c TOKEN\n3\n$ gh auth status\n"
        "  ✓ Logged in to github.com account dev (keyring)\n  - Token: gho_************************************\n"
        "  - Token scopes: 'gist', 'read:org', 'repo'"
    )
    blocks.append(
        "2026-11-27T10:00:01Z INFO  auth: token refreshed for user=42 expires_in=3600\n"
        "2026-11-27T10:00:02Z WARN  auth: password attempt failed for user=42 (3 of 5)\n"
        "2026-11-27T10:00:03Z ERROR api: invalid api key supplied (key id k-7)\n"
        "2026-11-27T10:00:04Z DEBUG http: GET /v1/keys?page=2 200 12ms\n"
        "2026-11-27T10:00:05Z INFO  vault: secret engine kv-v2 mounted at secret/"
    )
    blocks.append(
        'Traceback (most recent call last):\n  File "app.py", line 12, in <module>\n    token = client.login()\n'
        "  File \"client.py\", line 40, in login\n    raise AuthError('invalid password')\nAuthError: invalid password"
    )
    blocks.append(
        "MAX_TOKENS=4096 TOKEN_COUNT=5 TOKENIZERS_PARALLELISM=false\nAUTH_MODE=oauth DB_PASSWORD_FILE=/run/secrets/db\n"
        "API_KEY_ENV=OPENAI_API_KEY SECRET_NAME=prod-db PASSWORD_MIN_LENGTH=12\nPWD=/home/dev/project\nOLDPWD=/home/dev"
    )
    blocks.append(
        "$ kubectl get secret db-credentials -o jsonpath='{.data.password}' | base64 -d\n"
        "$ kubectl create secret generic db --from-file=password=./pw.txt\n"
        "$ aws secretsmanager get-secret-value --secret-id prod/db --query SecretString\n"
        "$ vault kv get -field=password secret/db"
    )
    blocks.append(
        '{"usage": {"prompt_tokens": 1234, "completion_tokens": 56, "total_tokens": 1290}, '
        '"model": "gpt-4o", "id": "chatcmpl-' + h(24) + '"}\n'
        '{"max_tokens": 4096, "temperature": 0.2, "stream": true}\n'
        '{"token_type": "Bearer", "expires_in": 3600, "scope": "read write"}\n'
        '{"tokenizer": "o200k_base", "password_policy": {"min_length": 12}}'
    )
    blocks.append(
        "| Key | Value |\n|-----|-------|\n| key_id | k-7 |\n| keyspace | users |\n| token_ttl | 3600 |\n"
        "| secret_engine | kv-v2 |"
    )
    blocks.append(
        '<configuration>\n  <appSettings>\n    <add key="PasswordMinLength" value="12" />\n'
        '    <add key="TokenLifetime" value="3600" />\n  </appSettings>\n'
        '  <connectionStrings>\n    <add name="Db" connectionString="Server=db;Database=app;Trusted_Connection=yes;" />\n'
        "  </connectionStrings>\n</configuration>"
    )
    blocks.append(
        '[core]\n\trepositoryformatversion = 0\n\tfilemode = true\n[remote "origin"]\n'
        "\turl = git@github.com:org/repo.git\n\tfetch = +refs/heads/*:refs/remotes/origin/*\n[credential]\n\thelper = store"
    )
    blocks.append(
        "[mysqld]\nport = 3306\nkey_buffer_size = 16M\nssl-key = /etc/mysql/server-key.pem\n"
        "[client]\npassword_file = ~/.mysql_pw\nsocket = /var/run/mysqld/mysqld.sock"
    )
    blocks.append(
        "machine api.example.com\n  login me\n  password_file ~/.secrets/api\n"
        "# .netrc documents machine, login and password tokens"
    )
    blocks.append(
        "FROM python:3.12-slim\nENV PYTHONUNBUFFERED=1 PIP_NO_CACHE_DIR=1\nARG TOKEN_FILE=/run/secrets/token\n"
        'RUN --mount=type=secret,id=npm_token,target=/root/.npmrc npm ci\nUSER app\nCMD ["gunicorn", "app:app"]'
    )
    blocks.append(
        "mysql -u root -h db -e 'show databases'\nmysql --user=app --host=db shop < dump.sql\n"
        "psql -h db -U app -d shop -c 'select 1'\nredis-cli -h cache ping\ndocker login ghcr.io -u dev --password-stdin"
    )
    blocks.append(
        "pytest -q -k 'token and not secret' --maxfail=1\n"
        + "\n".join(
            f"tests/test_auth.py::test_{name} PASSED"
            for name in ("token_refresh", "password_reset", "api_key_rotation", "basic_auth_header")
        )
    )
    # written after the rules, as a held-out check (12 of 95 lines were altered at first, 26 by the rules before
    # issue 31); the one then still altered, systemd's LoadCredential=, is in NEAR_NEW_RULES now that it passes
    blocks.append(HELD_OUT)
    # beside the rules added from the scanner measure (bench/scanner_coverage.py): provider names with
    # ordinary values, and commands whose -p / -P / -k flags are no passwords
    blocks.append(NEAR_NEW_RULES)
    blocks.append(
        "\n".join(
            f"{name}_{what}: {h(32) if what == 'zone_id' else value}"
            for name, what, value in (
                ("cloudflare", "zone_id", ""),
                ("datadog", "site", "datadoghq.eu"),
                ("sentry", "release", f"api@2026.11.27+{h(7)}"),
                ("heroku", "app", "shop-api-staging"),
                ("okta", "domain", "dev-48213077.okta.com"),
                ("algolia", "index", "products_en_v2"),
                ("stripe", "version", "2026-10-28.acacia"),
                ("twilio", "from", "+15005550006"),
            )
        )
    )
    return blocks


HELD_OUT = """\
server {
    listen 443 ssl;
    ssl_certificate     /etc/nginx/certs/site.crt;
    ssl_certificate_key /etc/nginx/certs/site.key;
    ssl_session_tickets off;
    auth_basic "Restricted";
    auth_basic_user_file /etc/nginx/.htpasswd;
    proxy_set_header Authorization $http_authorization;
}
[Service]
EnvironmentFile=/etc/default/api
Environment=TOKEN_FILE=/run/secrets/token
ExecStart=/usr/bin/api --config /etc/api.toml
.PHONY: test lint
SECRET_SCAN ?= gitleaks detect --source .
pk_user_id = request.user.pk
signing:
  key: 4AEE18F83AFDEB23
  key: node-modules-v2-3f9a2b1c4d5e6f708192a3b4c5d6e7f8
api-gateway-v2-prod-eu-west-1
see https://docs.example.com/sdk-reference/v2/quickstart
tailscale up --ssh --advertise-exit-node
supabase link --project-ref abcdefghijklmnopqrst
test:
	pytest -q --maxfail=1
CREATE TABLE api_keys (id SERIAL PRIMARY KEY, key_hash TEXT NOT NULL, created_at TIMESTAMPTZ);
SELECT token, expires_at FROM sessions WHERE user_id = $1;
INSERT INTO users (name, password_hash) VALUES ($1, $2);
<input type="password" name="password" autocomplete="current-password">
<meta name="csrf-token" content="{{ csrf_token() }}">
<label for="api-key">API key</label>
components:
  securitySchemes:
    bearerAuth:
      type: http
      scheme: bearer
      bearerFormat: JWT
    apiKeyAuth:
      type: apiKey
      in: header
      name: X-API-Key
auth:
  existingSecret: db-credentials
  secretKeys:
    adminPasswordKey: admin-password
    userPasswordKey: user-password
  password: ""
  postgresPassword: ""
DB_PASSWORD=
API_KEY=your-api-key-here
OPENAI_API_KEY=sk-...
SECRET_KEY=<generate with openssl rand -hex 32>
STRIPE_SECRET_KEY=sk_test_...
      - DB_PASSWORD=${DB_PASSWORD}
      - API_TOKEN=${API_TOKEN:?set it}
let token = req.headers.get("authorization").unwrap_or_default();
fn verify_token(token: &str, key: &DecodingKey) -> Result<Claims, Error> {
String password = System.getenv("DB_PASSWORD");
private static final String TOKEN_HEADER = "X-Auth-Token";
spring.datasource.password=${DB_PASSWORD}
jwt.secret=${JWT_SECRET}
app.security.token-validity-seconds=3600
aws_access_key_id =
region = us-east-1
output = json
Signature verified. Key fingerprint: 4AEE 18F8 3AFD EB23
gpg: Good signature from "Release Key <release@example.org>"
gpg: using RSA key 0x4AEE18F83AFDEB23
Get your API key at https://platform.openai.com/api-keys and set OPENAI_API_KEY.
Rotate the secret: kubectl rollout restart deploy/api
The token endpoint returns {"access_token": "...", "token_type": "Bearer"}.
curl -H "Authorization: Bearer $TOKEN" https://api.example.com/v1/me
curl -u "$USER:$PASSWORD" https://api.example.com
export GITHUB_TOKEN=$(gh auth token)
export AWS_SECRET_ACCESS_KEY=$(vault kv get -field=secret aws/creds)
password_hash = bcrypt.hashpw(password.encode(), bcrypt.gensalt())
if user.check_password(form.password.data):
token_bytes = secrets.token_bytes(32)
secret_key = Fernet.generate_key()
key_id: k-2024-11
keyring: ~/.gnupg/pubring.kbx
KeyName: deploy-key
ssh_authorized_keys:
  - ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIG3h dev@laptop
sessionToken: null
refreshToken: undefined
clientSecret: process.env.CLIENT_SECRET
apiKey: import.meta.env.VITE_API_KEY
"password": "********"
"apiKey": "<YOUR_API_KEY>"
"token": "${TOKEN}"
Password: ****
Enter passphrase for key '/home/dev/.ssh/id_ed25519':
[sudo] password for dev:
Token expires in 3600 seconds
Secret "db-credentials" created
secret/db-credentials configured
serviceaccount/builder created
Error: secret "api-token" not found
WARNING: Using --password via the CLI is insecure. Use --password-stdin.
npm notice Publishing to https://registry.npmjs.org/ with tag latest and default access
pip install --index-url https://pypi.example.com/simple --trusted-host pypi.example.com pkg
"""


NEAR_NEW_RULES = """\
[Service]
LoadCredential=db-password:/etc/creds/db
LoadCredentialEncrypted=tls-key:/etc/credstore.encrypted/tls-key
ImportCredential=api.*
twitter: https://twitter.com/example_dev
twitter_handle: example_dev
slack_channel: '#deploys'
mapbox_style: mapbox://styles/mapbox/streets-v12
linear = nn.Linear(hidden_size, num_labels)
self.linear_projection = nn.Linear(768, 768)
sonar.projectKey=org_service-api
sonar.host.url=https://sonarcloud.io
DATADOG_ENV=production
heroku_buildpack_version = "v250"
new_relic_app_name = "shop-api"
"twitter": "@example_dev",
Rotate the Twitter API key in the developer portal, then update the Dropbox app settings.
Mailchimp region: us21 (see the account page)
global_settings = load_settings(path)
blob_sha = repo.get_git_blob(path).sha
zip -r release.zip dist/
unzip -o artifact.zip -d out/
7z x -y archive.7z -oout/
ssh -p 2222 deploy@host
psql -h db -p 5432 -U app shop
mongosh --port 27017 --eval 'db.stats()'
mongosh -u admin -p --authenticationDatabase admin
az login --identity
az login --service-principal -u "$APP_ID" -p "$SP_SECRET" --tenant "$TENANT_ID"
vault login -method=oidc
vault login
htpasswd -c /etc/nginx/.htpasswd admin
rabbitmqctl list_users
smbclient -L //fileserver -U guest
plink -ssh -P 2222 deploy@host -batch
keytool -list -keystore cacerts -storepass:env STOREPASS
openssl enc -d -aes-256-cbc -pbkdf2 -kfile key.txt -in a.enc
openssl pkcs12 -export -in c.pem -passout env:P12_PASSWORD -out c.p12
gpg --passphrase-file ~/.gnupg/pass.txt --batch -d x.gpg
New-LocalUser -Name svc -NoPassword
$pw = Read-Host -AsSecureString "Password"
SECRET_SCAN ?= gitleaks detect --source .
pk_user_id = request.user.pk
signing:
  key: 4AEE18F83AFDEB23
  key: node-modules-v2-3f9a2b1c4d5e6f708192a3b4c5d6e7f8
api-gateway-v2-prod-eu-west-1
see https://docs.example.com/sdk-reference/v2/quickstart
tailscale up --ssh --advertise-exit-node
supabase link --project-ref abcdefghijklmnopqrst
DOCKER_BUILDKIT ?= 1
"""


def ordinary_lines() -> list[str]:
    """Every line of every block (blocks are also tested whole: some rules span lines)."""
    return [line for block in BLOCKS for line in block.split("\n") if line.strip()]


BLOCKS = _blocks()
