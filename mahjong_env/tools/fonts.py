"""A font for the Chinese labels (庄 听 碰 杠 番 ...) of the HTML replay viewer and the plots.

Without a font that covers CJK, browsers and matplotlib draw those labels as empty boxes
(tofu). The project depends on a system font rather than shipping one: Debian's
``fonts-wqy-microhei`` (WenQuanYi Micro Hei, 1.6 MB download, installed by ``.ci/run`` and the
README: ``apt-get install fonts-wqy-microhei``). Any other common CJK font works too: Noto Sans
CJK / Source Han Sans, WenQuanYi Zen Hei, Droid Sans Fallback, and the macOS and Windows system
fonts (PingFang, Hiragino, Microsoft YaHei, SimHei).

- `CSS_FONT_STACK`: the CSS ``font-family`` list the viewer uses (a CJK family after the UI
  font, so Latin text keeps the system look and the Chinese glyphs come from a CJK font).
- `cjk_font_path()`: the file of the first CJK font found (known paths, then ``fc-list``), or None.
- `cjk_font_family()`: its family name, or None; for matplotlib use `matplotlib_cjk_family()`,
  which also registers the file with matplotlib's font manager::

      from mahjong_env.tools.fonts import matplotlib_cjk_family

      family = matplotlib_cjk_family()
      if family is not None:
          plt.rcParams["font.sans-serif"] = [family, *plt.rcParams["font.sans-serif"]]
"""

from __future__ import annotations

import functools
import shutil
import subprocess
from pathlib import Path

__all__ = [
    "CJK_FONTS",
    "CSS_FONT_STACK",
    "DEBIAN_PACKAGE",
    "cjk_font_family",
    "cjk_font_path",
    "matplotlib_cjk_family",
]

DEBIAN_PACKAGE = "fonts-wqy-microhei"
"""The Debian package ``.ci/run`` installs for the CJK labels."""

CJK_FONTS: tuple[tuple[str, str], ...] = (
    ("WenQuanYi Micro Hei", "/usr/share/fonts/truetype/wqy/wqy-microhei.ttc"),
    ("Noto Sans CJK SC", "/usr/share/fonts/opentype/noto/NotoSansCJK-Regular.ttc"),
    ("Noto Sans CJK SC", "/usr/share/fonts/noto-cjk/NotoSansCJK-Regular.ttc"),
    ("Source Han Sans SC", "/usr/share/fonts/adobe-source-han-sans/SourceHanSansSC-Regular.otf"),
    ("WenQuanYi Zen Hei", "/usr/share/fonts/truetype/wqy/wqy-zenhei.ttc"),
    ("Droid Sans Fallback", "/usr/share/fonts/truetype/droid/DroidSansFallbackFull.ttf"),
    ("PingFang SC", "/System/Library/Fonts/PingFang.ttc"),
    ("Hiragino Sans GB", "/System/Library/Fonts/Hiragino Sans GB.ttc"),
    ("Microsoft YaHei", "C:/Windows/Fonts/msyh.ttc"),
    ("SimHei", "C:/Windows/Fonts/simhei.ttf"),
)
"""Known CJK fonts as (family, file), in order of preference."""

CSS_FONT_STACK = ", ".join(
    ["system-ui"] + list(dict.fromkeys(f'"{family}"' for family, _ in CJK_FONTS)) + ["sans-serif"]
)
"""CSS ``font-family`` value of the replay viewer."""


@functools.lru_cache(maxsize=1)
def _find() -> tuple[str, Path] | None:
    for family, file in CJK_FONTS:
        path = Path(file)
        if path.is_file():
            return family, path
    fc_list = shutil.which("fc-list")
    if fc_list is None:
        return None
    try:
        listing = subprocess.run(
            [fc_list, ":lang=zh", "family", "file"], capture_output=True, text=True, timeout=10, check=False
        ).stdout
    except (OSError, subprocess.SubprocessError):
        return None
    for line in sorted(listing.splitlines()):
        file, _, families = line.partition(":")
        family = families.split(",")[0].strip()
        if family and Path(file.strip()).is_file():
            return family, Path(file.strip())
    return None


def cjk_font_path() -> Path | None:
    """The file of an installed font with Chinese glyphs, or None (see the module doc)."""
    found = _find()
    return found[1] if found else None


def cjk_font_family() -> str | None:
    """The family name of `cjk_font_path`'s font, or None."""
    found = _find()
    return found[0] if found else None


def matplotlib_cjk_family() -> str | None:
    """Register the CJK font with matplotlib and return the family name matplotlib knows it
    by (for ``rcParams["font.sans-serif"]``), or None if no CJK font is installed."""
    path = cjk_font_path()
    if path is None:
        return None
    from matplotlib import font_manager

    font_manager.fontManager.addfont(str(path))
    return font_manager.FontProperties(fname=str(path)).get_name()
