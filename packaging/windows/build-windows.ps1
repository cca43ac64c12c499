# Builds Helm for Windows: dist\helm\ (one folder) and, with Inno Setup 6 installed,
# dist\helm-<version>-windows-x64-setup.exe. Run from a PowerShell prompt on Windows 10/11 x64:
#   powershell -ExecutionPolicy Bypass -File packaging\windows\build-windows.ps1
# Needs: Python 3.12 x64 (python.org), Inno Setup 6 (iscc.exe on PATH or in its default folder).
$ErrorActionPreference = "Stop"
$Root = Resolve-Path "$PSScriptRoot\..\.."
Set-Location $Root

if (-not (Test-Path .venv\Scripts\python.exe)) { py -3.12 -m venv .venv }
$Py = "$Root\.venv\Scripts\python.exe"
& $Py -m pip install -q --disable-pip-version-check -e .
& $Py -m pip install -q --disable-pip-version-check -r packaging\requirements.txt

$Version = & $Py -c "from app.cli import helm_version; print(helm_version())"
Remove-Item -Recurse -Force dist\helm, build\pyinstaller -ErrorAction SilentlyContinue
$env:PYI_LOG_LEVEL = "WARN"
& $Py -m PyInstaller --noconfirm --log-level WARN --distpath dist --workpath build\pyinstaller packaging\helm.spec
if ($LASTEXITCODE -ne 0) { throw "PyInstaller failed" }

# The build must pass its own self-test before it is packed.
$env:QT_QPA_PLATFORM = "offscreen"
& dist\helm\helm.exe --version
& dist\helm\helm.exe --self-test
if ($LASTEXITCODE -ne 0) { throw "the self-test failed" }
Remove-Item Env:QT_QPA_PLATFORM

$Iscc = (Get-Command iscc.exe -ErrorAction SilentlyContinue).Source
if (-not $Iscc) { $Iscc = "${env:ProgramFiles(x86)}\Inno Setup 6\ISCC.exe" }
& $Iscc "/DAppVersion=$Version" packaging\windows\helm.iss
if ($LASTEXITCODE -ne 0) { throw "Inno Setup failed" }
Write-Host "[bundle] dist\helm-$Version-windows-x64-setup.exe"
