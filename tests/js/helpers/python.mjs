// The Python interpreter of the project's own environment (.venv/, made by scripts/setup.sh),
// where the reference tools live; PYTHON overrides it.
import fs from "node:fs";
import { fileURLToPath } from "node:url";

const venv = fileURLToPath(new URL("../../../.venv/bin/python", import.meta.url));

export const PYTHON = process.env.PYTHON ?? (fs.existsSync(venv) ? venv : "python3");
