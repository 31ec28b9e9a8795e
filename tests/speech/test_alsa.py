"""The card the speaker will play on, checked against /proc/asound/cards as a Pi 5
writes it (the text given, as the kernel would): a named card must be there, and ALSA's
default on HDMI is said in one line."""

from __future__ import annotations

import pytest

from companion.speech.alsa import Card, card_in, check_device, parse_cards

PI5_HDMI = (" 0 [vc4hdmi0       ]: vc4-hdmi - vc4-hdmi-0\n"
            "                      vc4-hdmi-0\n"
            " 1 [vc4hdmi1       ]: vc4-hdmi - vc4-hdmi-1\n"
            "                      vc4-hdmi-1\n")
USB = (" 2 [UACDemoV10     ]: USB-Audio - UACDemoV1.0\n"
       "                      Jieli Technology UACDemoV1.0 at usb-xhci-hcd.1-1, full speed\n")
I2S_FIRST = " 0 [MAX98357A      ]: simple-card - MAX98357A\n                      MAX98357A\n"
NO_ENV: dict[str, str] = {}


def test_proc_asound_cards_is_read_card_by_card():
    cards = parse_cards(PI5_HDMI + USB)
    assert cards == [Card(0, "vc4hdmi0", "vc4-hdmi", "vc4-hdmi-0"),
                     Card(1, "vc4hdmi1", "vc4-hdmi", "vc4-hdmi-1"),
                     Card(2, "UACDemoV10", "USB-Audio", "UACDemoV1.0")]
    assert [c.hdmi for c in cards] == [True, True, False]
    assert parse_cards("--- no soundcards ---\n") == [] == parse_cards("")


@pytest.mark.parametrize("device, card", [
    ("plughw:CARD=UACDemoV10,DEV=0", "UACDemoV10"), ("plughw:1,0", "1"), ("hw:2", "2"),
    ("hw:UACDemoV10", "UACDemoV10"), ('sysdefault:CARD="MAX98357A"', "MAX98357A"),
    ("front:CARD=Headphones,DEV=0", "Headphones"), ("", ""), ("default", ""),
    ("plughw", ""), ("plughw:,0", ""), ("pulse", None), ("speakers", None)])
def test_the_card_in_an_alsa_device_name(device, card):
    assert card_in(device) == card


def test_a_named_card_that_is_there_by_id_or_index():
    for device in ("plughw:CARD=UACDemoV10,DEV=0", "plughw:2,0"):
        found = check_device(device, PI5_HDMI + USB, env=NO_ENV)
        assert found.ok and found.line == "" and found.card.id == "UACDemoV10"


def test_a_named_card_that_is_not_there_is_one_line_naming_the_cards():
    found = check_device("plughw:CARD=UACDemoV10,DEV=0", PI5_HDMI, env=NO_ENV)
    assert not found.ok
    assert found.line == ("ALSA device 'plughw:CARD=UACDemoV10,DEV=0': no card UACDemoV10 in "
                          "/proc/asound/cards (0 vc4hdmi0, 1 vc4hdmi1); aplay -L lists the "
                          "devices")
    assert not check_device("hw:3,0", PI5_HDMI + USB, env=NO_ENV).ok
    assert not check_device("hw:uacdemov10", PI5_HDMI + USB, env=NO_ENV).ok  # ALSA: exact


def test_no_card_at_all_is_not_ok():
    found = check_device("", "--- no soundcards ---\n", env=NO_ENV)
    assert not found.ok and found.line == ("ALSA's default device: no sound card "
                                           "(/proc/asound/cards lists none)")


def test_the_default_on_a_pi_with_only_hdmi_says_it_plays_on_hdmi():
    for device in ("", "default"):
        found = check_device(device, PI5_HDMI, env=NO_ENV)
        assert found.ok and found.card.index == 0 and "\n" not in found.line
        assert "plays on card 0 vc4hdmi0, HDMI: silent on a box without a screen's" in found.line
        assert "add a USB speaker or an I2S amplifier" in found.line


def test_the_default_on_hdmi_beside_a_usb_speaker_names_the_device_to_set():
    found = check_device("", PI5_HDMI + USB, env=NO_ENV)
    assert found.ok and found.line.endswith(
        'set [sound] device = "plughw:CARD=UACDemoV10,DEV=0" (card 2 UACDemoV10)')


def test_the_default_on_a_table_speaker_or_set_elsewhere_is_fine():
    found = check_device("", I2S_FIRST + USB, env=NO_ENV)
    assert found.ok and found.line == "" and found.card.id == "MAX98357A"
    # ALSA_CARD moves the default card; an asound.conf may set any default
    assert check_device("", PI5_HDMI + USB, env={"ALSA_CARD": "UACDemoV10"}).line == ""
    assert check_device("", PI5_HDMI, env=NO_ENV, configured_default=True).line == ""
    # a device without a card (pulse, asound.conf's own) is left to aplay
    assert check_device("pulse", PI5_HDMI, env=NO_ENV).ok
