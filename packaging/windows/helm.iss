; Inno Setup 6 script: a Windows installer for the one-folder build in dist\helm\.
; Build the folder first (packaging/README.md), then, from the repository root:
;   iscc /DAppVersion=0.1.0 packaging\windows\helm.iss
; Output: dist\helm-<version>-windows-x64-setup.exe

#ifndef AppVersion
  #error Pass the version: iscc /DAppVersion=<version> packaging\windows\helm.iss
#endif

[Setup]
AppId={{0426E1E1-7CBF-43D8-9135-5B3B70A48729}
AppName=Helm
AppVersion={#AppVersion}
AppVerName=Helm {#AppVersion}
AppPublisher=Helm
DefaultDirName={autopf}\Helm
DefaultGroupName=Helm
DisableProgramGroupPage=yes
; Per-user install by default (no administrator needed); the first page offers all users.
PrivilegesRequired=lowest
PrivilegesRequiredOverridesAllowed=dialog
ArchitecturesAllowed=x64compatible
ArchitecturesInstallIn64BitMode=x64compatible
MinVersion=10.0.17763
OutputDir=..\..\dist
OutputBaseFilename=helm-{#AppVersion}-windows-x64-setup
Compression=lzma2/max
SolidCompression=yes
WizardStyle=modern
UninstallDisplayIcon={app}\helmw.exe
UninstallDisplayName=Helm {#AppVersion}
; Helm's settings and secrets live in the user's Helm home, outside {app}; uninstalling leaves them.

[Tasks]
Name: "desktopicon"; Description: "{cm:CreateDesktopIcon}"; GroupDescription: "{cm:AdditionalIcons}"; Flags: unchecked

[Files]
Source: "..\..\dist\helm\*"; DestDir: "{app}"; Flags: ignoreversion recursesubdirs createallsubdirs

[Icons]
Name: "{autoprograms}\Helm"; Filename: "{app}\helmw.exe"
Name: "{autodesktop}\Helm"; Filename: "{app}\helmw.exe"; Tasks: desktopicon

[Run]
Filename: "{app}\helmw.exe"; Description: "{cm:LaunchProgram,Helm}"; Flags: nowait postinstall skipifsilent
