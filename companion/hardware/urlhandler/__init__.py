"""pyserial URL handlers (modules named protocol_<scheme>), found through
``serial.protocol_handler_packages``; see companion.hardware.pico_sim."""
