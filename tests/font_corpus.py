"""A generated corpus of Indic letters for the font tests (issue 36, point 1): every consonant with
every vowel sign of Tamil and Devanagari, conjuncts, and a line of each other script the app ships a
font for, in which every consonant and every vowel sign of that script appears at least once.

Not a test module (pytest collects only ``test_*.py``). The letters are listed here by hand (the
modern letters of each script), not read from the fonts, so a font that lacks one fails the test.
"""

from __future__ import annotations

import csv
import io

#: The 18 Tamil consonants, the 5 Grantha consonants (ஜ ஶ ஷ ஸ ஹ), and the vowel signs and virama.
TAMIL_CONSONANTS = "கஙசஞடணதநபமயரலவழளறனஜஶஷஸஹ"
TAMIL_SIGNS = "ாிீுூெேைொோௌ்"

#: Devanagari consonants क..ह, the nukta letters, and the vowel signs, candra signs and virama of
#: Hindi, Marathi and Nepali text.
DEVANAGARI_CONSONANTS = "कखगघङचछजझञटठडढणतथदधनपफबभमयरलळवशषसह" + "क़ख़ग़ज़ड़ढ़फ़य़"
DEVANAGARI_SIGNS = "ािीुूृॄॅॆेैॉॊोौ्"

#: Conjuncts that fonts draw as one shape (or fail to): Tamil க்ஷ, ஸ்ரீ, Devanagari क्ष, त्र, ज्ञ,
#: श्र, reph (र्क), half forms and stacks.
CONJUNCTS = (
    "க்ஷ",
    "க்ஷா",
    "ஸ்ரீ",
    "ஶ்ரீ",
    "க்ஷ்",
    "क्ष",
    "त्र",
    "ज्ञ",
    "श्र",
    "द्ध",
    "द्व",
    "ह्म",
    "क्त",
    "प्र",
    "र्क",
    "स्त्र",
    "ट्ट",
    "श्री",
    "क्षि",
)

#: Per other script: its consonants, its vowel signs (with its virama last), and a few words.
OTHER_SCRIPTS: dict[str, tuple[str, str, str]] = {
    "Bengali": ("কখগঘঙচছজঝঞটঠডঢণতথদধনপফবভমযরলশষসহড়ঢ়য়", "ািীুূৃেৈোৌ্", "বাংলা ভাষা ক্ষ জ্ঞ শ্র ৎ"),
    "Telugu": ("కఖగఘఙచఛజఝఞటఠడఢణతథదధనపఫబభమయరఱలళవశషసహ", "ాిీుూృౄెేైొోౌ్", "తెలుగు భాష క్ష శ్రీ"),
    "Kannada": ("ಕಖಗಘಙಚಛಜಝಞಟಠಡಢಣತಥದಧನಪಫಬಭಮಯರಱಲಳವಶಷಸಹ", "ಾಿೀುೂೃೄೆೇೈೊೋೌ್", "ಕನ್ನಡ ಭಾಷೆ ಕ್ಷ ಶ್ರೀ"),
    "Malayalam": ("കഖഗഘങചഛജഝഞടഠഡഢണതഥദധനപഫബഭമയരറലളഴവശഷസഹ", "ാിീുൂൃെേൈൊോൌ്", "മലയാളം ഭാഷ ക്ഷ ന്റ ൻ ർ ൽ ൾ"),
    "Gujarati": ("કખગઘઙચછજઝઞટઠડઢણતથદધનપફબભમયરલળવશષસહ", "ાિીુૂૃૄૅેૈૉોૌ્", "ગુજરાતી ભાષા ક્ષ જ્ઞ શ્ર"),
    "Gurmukhi": ("ਕਖਗਘਙਚਛਜਝਞਟਠਡਢਣਤਥਦਧਨਪਫਬਭਮਯਰਲਵੜਸ਼ਖ਼ਗ਼ਜ਼ਫ਼", "ਾਿੀੁੂੇੈੋੌ੍", "ਪੰਜਾਬੀ ਭਾਸ਼ਾ ਸ੍ਰੀ ਕ੍ਰ"),
    "Oriya": ("କଖଗଘଙଚଛଜଝଞଟଠଡଢଣତଥଦଧନପଫବଭମଯରଲଳଵଶଷସହଡ଼ଢ଼ୟ", "ାିୀୁୂୃେୈୋୌ୍", "ଓଡ଼ିଆ ଭାଷା କ୍ଷ ଶ୍ରୀ"),
}


def letters(text: str) -> list[str]:
    """``text``'s letters one by one: each consonant of a script once (a nukta letter is two code
    points, ``क़`` = क + ़, and stays whole)."""
    out: list[str] = []
    for ch in text:
        if out and ch in "\u093c\u09bc\u0a3c\u0b3c":  # nukta: part of the letter before it
            out[-1] += ch
        else:
            out.append(ch)
    return out


def pairs(consonants: str, signs: str) -> list[str]:
    """Every consonant alone and with every vowel sign."""
    cons = letters(consonants)
    return cons + [c + s for c in cons for s in signs]


def other_line(consonants: str, signs: str, words: str) -> list[str]:
    """Every consonant once, each with the next vowel sign in turn (so every sign appears), then
    the script's words."""
    cons = letters(consonants)
    return [c + signs[i % len(signs)] for i, c in enumerate(cons)] + words.split()


def tamil() -> list[str]:
    return pairs(TAMIL_CONSONANTS, TAMIL_SIGNS)


def devanagari() -> list[str]:
    return pairs(DEVANAGARI_CONSONANTS, DEVANAGARI_SIGNS)


def others() -> dict[str, list[str]]:
    return {script: other_line(*parts) for script, parts in OTHER_SCRIPTS.items()}


def clusters() -> list[str]:
    """Every cluster of the corpus once, in order: Tamil, Devanagari, conjuncts, the other lines."""
    seen: dict[str, None] = {}
    for group in (tamil(), devanagari(), list(CONJUNCTS), *others().values()):
        seen.update(dict.fromkeys(group))
    return list(seen)


#: The question of the card's row: every Tamil pair (the failing case began with one); its golden
#: answer and response hold the rest, in swapped halves so the row is an overlap_only row (every
#: golden word present, not as one substring) and is the queue's first card.
def corpus_csv(domain: str = "தமிழ் இலக்கியம்") -> bytes:
    """The run the font tests upload: the corpus row, then a Bengali row in its own domain."""
    first = " ".join(devanagari() + list(CONJUNCTS))
    second = " ".join(w for line in others().values() for w in line)
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(["question", "answer", "response", "Domain"])
    writer.writerow([" ".join(tamil()), f"{first} {second}", f"{second} {first}", domain])
    bengali = " ".join(others()["Bengali"])
    writer.writerow([f"বাংলা প্রশ্ন {bengali}", "বাংলা", "বাংলা", "বাংলা সাহিত্য"])
    return buffer.getvalue().encode("utf-8")
