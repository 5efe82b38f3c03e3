"""The macOS binaries, checked as far as a Linux machine can (LLVM's llvm-objdump and llvm-nm,
Debian's `llvm`): they are built and checked here, never run (no macOS in the test command).

FMI 2.0 carries `binaries/darwin64/<id>.dylib`, one universal binary with x86_64 and arm64;
FMI 3.0 `binaries/x86_64-darwin/` and `binaries/aarch64-darwin/`, one thin binary each. Every
Mach-O slice must:
  - be a dylib for macOS with the minimum version MINIMUM_MACOS (LC_BUILD_VERSION);
  - link system libraries only (/usr/lib, /System/Library);
  - be named `@rpath/...` (LC_ID_DYLIB), not after the machine that built it, with no LC_RPATH;
  - export exactly what the linux64 `.so` exports (the FMI functions and the runtime's);
  - import no maths function (the runtime's libm computes them, as on Linux and Windows);
  - on arm64, carry a code signature (LC_CODE_SIGNATURE): macOS refuses unsigned arm64 code.
"""
import os
import re
import subprocess

MINIMUM_MACOS = "11.0"
SYSTEM_PREFIXES = ("/usr/lib/", "/System/Library/")
# The C library's maths: a binary importing one would compute it with libSystem's, whose last
# digits can differ from the libm the other platforms run.
MATHS = {"pow", "cbrt", "sin", "cos", "tan", "asin", "acos", "atan", "atan2", "sinh", "cosh",
         "tanh", "exp", "exp2", "expm1", "log", "log2", "log10", "log1p", "hypot", "fmod",
         "sqrt", "floor", "ceil", "round", "trunc", "powf", "sinf", "cosf", "expf", "logf"}


def tool(*args):
    return subprocess.run(list(args), capture_output=True, text=True, check=True).stdout


def architectures(path):
    """The architectures of a Mach-O file, universal or thin."""
    universal = tool("llvm-objdump", "--macho", "--universal-headers", path)
    found = re.findall(r"^architecture (\S+)$", universal, re.M)
    if found:
        return found
    header = tool("llvm-objdump", "--macho", "--private-header", path)
    return [m.lower() for m in re.findall(r"MH_MAGIC_64\s+(\S+)", header)]


def load_commands(path, arch):
    """(command, fields) for each load command of one slice."""
    text = tool("llvm-objdump", "--macho", f"--arch={arch}", "--private-headers", path)
    commands = []
    for block in re.split(r"\n(?=Load command \d+)", text)[1:]:
        name = re.search(r"^\s*cmd (\S+)", block, re.M).group(1)
        fields = dict(re.findall(r"^\s*(name|minos|sdk|platform|path) (\S+)", block, re.M))
        commands.append((name, fields))
    return commands


def symbols(path, *flags):
    return {s[1:] if s.startswith("_") else s
            for s in tool("llvm-nm", "-j", *flags, path).split()}


def linux_exports(so):
    return set(tool("llvm-nm", "-j", "-D", "--defined-only", so).split())


def check_slice(path, arch, exports, where):
    """What is wrong with one slice, as lines naming `where`."""
    problems = []
    commands = load_commands(path, arch)
    names = [c for c, _ in commands]
    version = [f for c, f in commands if c == "LC_BUILD_VERSION"]
    if not version or version[0].get("platform") != "macos" or \
            version[0].get("minos") != MINIMUM_MACOS:
        problems.append(f"{where}: LC_BUILD_VERSION {version}, not macos minos {MINIMUM_MACOS}")
    linked = [f.get("name") for c, f in commands if c == "LC_LOAD_DYLIB"]
    foreign = [d for d in linked if not d.startswith(SYSTEM_PREFIXES)]
    if foreign or not linked:
        problems.append(f"{where}: links {linked}, not system libraries only")
    ident = [f.get("name") for c, f in commands if c == "LC_ID_DYLIB"]
    if len(ident) != 1 or not ident[0].startswith("@rpath/"):
        problems.append(f"{where}: install name {ident}, not @rpath/...")
    if "LC_RPATH" in names:
        problems.append(f"{where}: has an LC_RPATH (a path of the build machine)")
    if arch == "arm64" and "LC_CODE_SIGNATURE" not in names:
        problems.append(f"{where}: arm64 without a code signature")
    exported = symbols(path, f"--arch={arch}", "-gU")
    if exported != exports:
        problems.append(f"{where}: exports differ from linux64's: more "
                        f"{sorted(exported - exports)[:5]}, fewer {sorted(exports - exported)[:5]}")
    maths = sorted(symbols(path, f"--arch={arch}", "-u") & MATHS)
    if maths:
        problems.append(f"{where}: imports maths from the system: {', '.join(maths)}")
    return problems


def inspect(fmu_dir, model, fmi3):
    """What is wrong with the unpacked FMU's macOS binaries (an empty list: nothing)."""
    linux = os.path.join(fmu_dir, "binaries", "x86_64-linux" if fmi3 else "linux64",
                         f"{model}.so")
    if not os.path.isfile(linux):
        return [f"no {os.path.relpath(linux, fmu_dir)} to compare the macOS exports with"]
    exports = linux_exports(linux)
    wanted = ({"x86_64-darwin": ["x86_64"], "aarch64-darwin": ["arm64"]} if fmi3
              else {"darwin64": ["x86_64", "arm64"]})
    problems = []
    for platform, archs in wanted.items():
        path = os.path.join(fmu_dir, "binaries", platform, f"{model}.dylib")
        where = f"binaries/{platform}/{model}.dylib"
        if not os.path.isfile(path):
            problems.append(f"no {where}")
            continue
        try:
            found = architectures(path)
        except subprocess.CalledProcessError as e:
            problems.append(f"{where}: not Mach-O ({e.stderr.strip()})")
            continue
        if found != archs:
            problems.append(f"{where}: holds {found}, not {archs}")
            continue
        for arch in archs:
            problems += check_slice(path, arch, exports, f"{where} ({arch})")
    return problems
